import { RunErrorCode, ToolResultCode, type RequestedToolCall, type RunState, type StoredRunEvent, type ToolResult } from "@steward/contract";
import type { Observation } from "../domain/decider";
import type { ModelAnswer } from "../domain/model";
import { byAnotherWriter } from "./replay-commands";

const modelFailures: readonly number[] = [RunErrorCode.modelUnavailable, RunErrorCode.modelTruncated, RunErrorCode.outputUnparseable];

/** The first recorded event from `at` on that the loop wrote, skipping what other writers appended meanwhile. */
function nextOwn(recorded: readonly StoredRunEvent[], at: number, state: RunState): number {
  let i = at;
  while (i < recorded.length && byAnotherWriter(recorded[i], state)) i++;
  return i;
}

/**
 * The model's answer as it must have been to produce the recorded thought, message or truncated message. A
 * message that ends a continued answer holds the parts before it too (`partial_text`): the model said the rest.
 */
function answerOf(event: StoredRunEvent | undefined, state: RunState): ModelAnswer | null {
  switch (event?.type) {
    case "thought": {
      const toolCalls = event.data.tool_calls.map((c) => ({ id: c.call_id, name: c.tool_name, arguments: c.arguments }));
      return { text: event.data.text, toolCalls, finishReason: "tool_calls", usage: event.data.usage, provider: event.data.provider };
    }
    case "message": {
      const { text } = event.data;
      const said = state.partial_text && text.startsWith(state.partial_text) ? text.slice(state.partial_text.length) : text;
      return { text: said, toolCalls: [], finishReason: "stop", usage: event.data.usage, provider: event.data.provider };
    }
    case "message.truncated":
      return { text: event.data.text, toolCalls: [], finishReason: "length", usage: event.data.usage, provider: event.data.provider };
    default:
      return null;
  }
}

/**
 * What the loop learnt when it went to the model for `stepNo`, read from the recording: a compaction of the
 * window, the answer (after a recorded fallback), the model unavailable (60300), or an answer with nothing
 * usable (60301, 60302). Null when the recording holds none of these: the run was interrupted there.
 */
export function observedModel(recorded: readonly StoredRunEvent[], at: number, state: RunState, stepNo: number): Observation | null {
  const i = nextOwn(recorded, at, state);
  const first = recorded[i];
  if (first?.type === "context.compacted") {
    const { call_ids, tokens_before, tokens_after } = first.data;
    return { kind: "compact", stepNo, callIds: call_ids, tokensBefore: tokens_before, tokensAfter: tokens_after };
  }
  const fallback = first?.type === "provider.fallback" ? first.data : undefined;
  const answer = answerOf(fallback ? recorded[i + 1] : first, state);
  if (answer) return { kind: "model_answer", stepNo, answer, primary: fallback?.from };
  if (first?.type !== "run.failed" || !modelFailures.includes(first.data.error.code)) return null;
  if (first.data.error.code === RunErrorCode.modelUnavailable) return { kind: "model_unavailable", stepNo, lastDelivery: true };
  const finishReason = first.data.error.code === RunErrorCode.modelTruncated ? "length" : "stop";
  return { kind: "model_answer", stepNo, answer: { text: "", toolCalls: [], finishReason, usage: { input_tokens: 0, output_tokens: 0 }, provider: "" } };
}

/**
 * tool-exec's answer to `call`, read from the recording (after the PDP's recorded decision). Null when the
 * recording has no answer from tool-exec there: the runner died with the call in flight and the run's next
 * holder decided anew (a result of unknown outcome), or a cancel ended the run first.
 */
export function observedTool(recorded: readonly StoredRunEvent[], at: number, state: RunState, call: RequestedToolCall): Observation | null {
  const i = nextOwn(recorded, at, state);
  const first = recorded[i];
  const result = first?.type === "tool.decided" ? recorded[i + 1] : first;
  if (result?.type !== "tool_result" || result.data.call_id !== call.call_id) return null;
  if (result.data.result_code === ToolResultCode.outcomeUnknown && result.data.fingerprint === "") return null;
  return { kind: "tool_outcome", result: result as ToolResult };
}

/**
 * The thread's history as the loop built it, read from the recorded `context.history` (the earlier runs and
 * the model's window are not part of this run's recording). Null when none is recorded there.
 */
export function observedHistory(recorded: readonly StoredRunEvent[], at: number, state: RunState): Observation | null {
  const first = recorded[nextOwn(recorded, at, state)];
  return first?.type === "context.history" ? { kind: "history_loaded", history: first.data } : null;
}

/** The PDP's decision is absent from recordings made before the runner recorded decisions. */
export function decisionNotRecorded(want: { type: string }, got: StoredRunEvent | undefined): boolean {
  return want.type === "tool.decided" && got?.type === "tool_result";
}

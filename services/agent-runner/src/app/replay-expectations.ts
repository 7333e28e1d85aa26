import { RunErrorCode, canonicalJson, type RunEvent, type RunState, type StoredRunEvent } from "@steward/contract";
import { eventsForAnswer } from "../domain/answer";
import type { ModelAnswer } from "../domain/model";
import type { NextStep } from "../domain/next-step";
import { shortCircuitResult } from "./tool-step";

/**
 * One event the loop would append for a step: either the event itself, or — for what only the model or a tool
 * can supply and the recording lacks — a description of what was due.
 */
export type Expected = RunEvent | string;

const modelFailures: readonly number[] = [RunErrorCode.modelUnavailable, RunErrorCode.modelTruncated, RunErrorCode.outputUnparseable];

/** The model's answer as it must have been to produce the recorded thought or message. */
function recordedAnswer(event: StoredRunEvent): ModelAnswer | null {
  if (event.type === "thought") {
    const toolCalls = event.data.tool_calls.map((c) => ({ id: c.call_id, name: c.tool_name, arguments: c.arguments }));
    return { text: event.data.text, toolCalls, finishReason: "tool_calls", usage: event.data.usage, provider: event.data.provider };
  }
  if (event.type === "message") {
    return { text: event.data.text, toolCalls: [], finishReason: "stop", usage: event.data.usage, provider: event.data.provider };
  }
  return null;
}

/**
 * What the loop would append for `step`, taking the model's answer and the tool's result from the recording
 * at `at` instead of asking for them. Times and runner ids are left empty: `sameDecision` ignores them.
 */
export function expectedEvents(step: NextStep, state: RunState, recorded: readonly StoredRunEvent[], at: number): Expected[] {
  const next = recorded[at];
  switch (step.kind) {
    case "done":
      return [];
    case "start":
      return [{ type: "run.started", data: { runner_id: "", started_at: "" } }];
    case "fail":
      return [{ type: "run.failed", data: { error: step.error, finished_at: "" } }];
    case "open_circuit":
      return [{ type: "circuit.opened", data: { step_no: state.step_no, tool_name: step.toolName, failures: step.failures } }];
    case "short_circuit":
      return [shortCircuitResult(state, step.call)];
    case "run_tool": {
      const { call } = step;
      const out: Expected[] = [
        { type: "tool_call", data: { step_no: state.step_no, call_id: call.call_id, tool_name: call.tool_name, arguments: call.arguments } },
      ];
      const result = recorded[at + 1];
      if (result?.type !== "tool_result" || result.data.call_id !== call.call_id) return [...out, `tool_result of call ${call.call_id}`];
      out.push({ type: "tool_result", data: { ...result.data, step_no: state.step_no, tool_name: call.tool_name } });
      // An AbortOnDeny tool's denial ends the run in the same append; the recording tells whether the tool was one.
      const { decision, result_code } = result.data;
      const abort = recorded[at + 2];
      const code = Number(decision.code) || RunErrorCode.policyDenied;
      if (!decision.permit && result_code !== "INVALID_ARGUMENTS" && abort?.type === "run.failed" && abort.data.error.code === code) {
        out.push({ type: "run.failed", data: { error: { code, message: "", tool_name: call.tool_name, step_no: state.step_no }, finished_at: "" } });
      }
      return out;
    }
    case "call_model": {
      const answer = next && recordedAnswer(next);
      if (answer) return eventsForAnswer(state, step.stepNo, answer, "");
      if (next?.type === "run.failed" && modelFailures.includes(next.data.error.code)) {
        if (next.data.error.code === RunErrorCode.modelUnavailable) {
          return [{ type: "run.failed", data: { error: { code: RunErrorCode.modelUnavailable, message: "", step_no: step.stepNo }, finished_at: "" } }];
        }
        const finishReason = next.data.error.code === RunErrorCode.modelTruncated ? "length" : "stop";
        const empty: ModelAnswer = { text: "", toolCalls: [], finishReason, usage: { input_tokens: 0, output_tokens: 0 }, provider: "" };
        return eventsForAnswer(state, step.stepNo, empty, "");
      }
      return [`the model's answer for step ${step.stepNo} (thought, message or run.failed 60300-60302)`];
    }
    default: {
      const unreachable: never = step;
      throw new TypeError(`unknown step ${JSON.stringify(unreachable)}`);
    }
  }
}

/**
 * Whether a recorded event is the one the loop would have appended. Clock readings and the runner's id are
 * not decisions and are not compared; neither is an error's wording. A failure must agree on code,
 * tool_name and cycle_length, and on step_no when the decider names one (the reaper adds it to 60402).
 */
export function sameDecision(want: RunEvent, got: RunEvent): boolean {
  if (want.type !== got.type) return false;
  switch (want.type) {
    case "run.started":
      return true;
    case "run.failed":
    case "run.cancelled": {
      const a = want.data.error;
      const b = (got as typeof want).data.error;
      return a.code === b.code && a.tool_name === b.tool_name && a.cycle_length === b.cycle_length && (a.step_no === undefined || a.step_no === b.step_no);
    }
    case "run.succeeded":
      return canonicalJson(want.data.output) === canonicalJson((got as typeof want).data.output);
    default:
      return canonicalJson(want.data) === canonicalJson(got.data);
  }
}

/** A short, readable form of an expected or recorded event for the report. */
export function describe(event: Expected | undefined): string {
  if (event === undefined) return "the end of the stream";
  if (typeof event === "string") return event;
  const shown = event.type === "run.failed" || event.type === "run.cancelled" ? event.data.error : event.data;
  const text = `${event.type} ${canonicalJson(shown)}`;
  return text.length > 240 ? `${text.slice(0, 237)}...` : text;
}

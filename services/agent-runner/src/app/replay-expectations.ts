import {
  RunErrorCode,
  ToolResultCode,
  canonicalJson,
  type RequestedToolCall,
  type RunEvent,
  type RunState,
  type StoredRunEvent,
} from "@steward/contract";
import { eventsForAnswer } from "../domain/answer";
import type { ModelAnswer } from "../domain/model";
import type { NextStep } from "../domain/next-step";
import type { ToolCatalog } from "../domain/tool-catalog";
import { gateCall } from "../domain/tool-gate";
import { controlledResult, shortCircuitResult } from "./tool-step";

/**
 * One event the loop would append for a step: either the event itself, or — for what only the model, a tool
 * or the user can supply and the recording lacks — a description of what was due.
 */
export type Expected = RunEvent | string;

const modelFailures: readonly number[] = [RunErrorCode.modelUnavailable, RunErrorCode.modelTruncated, RunErrorCode.outputUnparseable];

/** The model's answer as it must have been to produce the recorded thought or message. */
function recordedAnswer(event: StoredRunEvent | undefined): ModelAnswer | null {
  if (event?.type === "thought") {
    const toolCalls = event.data.tool_calls.map((c) => ({ id: c.call_id, name: c.tool_name, arguments: c.arguments }));
    return { text: event.data.text, toolCalls, finishReason: "tool_calls", usage: event.data.usage, provider: event.data.provider };
  }
  if (event?.type === "message") {
    return { text: event.data.text, toolCalls: [], finishReason: "stop", usage: event.data.usage, provider: event.data.provider };
  }
  return null;
}

/** A model step: the recorded answer (after a recorded fallback of that step) through `eventsForAnswer`. */
function modelStep(stepNo: number, state: RunState, recorded: readonly StoredRunEvent[], at: number): Expected[] {
  const first = recorded[at];
  const fallback = first?.type === "provider.fallback" ? first.data : undefined;
  const next = recorded[at + (fallback ? 1 : 0)];
  const answer = recordedAnswer(next);
  if (answer) {
    const fellBack: Expected[] = fallback ? [{ type: "provider.fallback", data: { step_no: stepNo, from: fallback.from, to: answer.provider } }] : [];
    return [...fellBack, ...eventsForAnswer(state, stepNo, answer, "")];
  }
  if (!fallback && next?.type === "run.failed" && modelFailures.includes(next.data.error.code)) {
    if (next.data.error.code === RunErrorCode.modelUnavailable) {
      return [{ type: "run.failed", data: { error: { code: RunErrorCode.modelUnavailable, message: "", step_no: stepNo }, finished_at: "" } }];
    }
    const finishReason = next.data.error.code === RunErrorCode.modelTruncated ? "length" : "stop";
    return eventsForAnswer(state, stepNo, { text: "", toolCalls: [], finishReason, usage: { input_tokens: 0, output_tokens: 0 }, provider: "" }, "");
  }
  return [`the model's answer for step ${stepNo} (thought, message or run.failed 60300-60302)`];
}

/**
 * A call tool-exec ran: `tool_call`, the PDP's decision (not for arguments the tool's schema refused; absent
 * from recordings made before the runner recorded decisions), the recorded result, and the AbortOnDeny
 * failure when the tool was denied and the recording holds that failure.
 */
function invokedCall(call: RequestedToolCall, state: RunState, recorded: readonly StoredRunEvent[], at: number): Expected[] {
  const out: Expected[] = [
    { type: "tool_call", data: { step_no: state.step_no, call_id: call.call_id, tool_name: call.tool_name, arguments: call.arguments } },
  ];
  const first = recorded[at + 1];
  const decided = first?.type === "tool.decided" ? first.data : undefined;
  const result = recorded[at + (decided ? 2 : 1)];
  if (result?.type !== "tool_result" || result.data.call_id !== call.call_id) {
    if (decided) out.push({ type: "tool.decided", data: { ...decided, step_no: state.step_no, call_id: call.call_id, tool_name: call.tool_name } });
    return [...out, `tool_result of call ${call.call_id}`];
  }
  const { decision, result_code, fingerprint } = result.data;
  const refusedArguments = result_code === ToolResultCode.invalidArguments;
  if (decided && !refusedArguments) {
    out.push({
      type: "tool.decided",
      data: { step_no: state.step_no, call_id: call.call_id, tool_name: call.tool_name, policy_point: decided.policy_point, fingerprint, ...decision },
    });
  }
  out.push({ type: "tool_result", data: { ...result.data, step_no: state.step_no, tool_name: call.tool_name } });
  const abort = recorded[at + out.length];
  const code = Number(decision.code) || RunErrorCode.policyDenied;
  if (!decision.permit && !refusedArguments && abort?.type === "run.failed" && abort.data.error.code === code) {
    out.push({ type: "run.failed", data: { error: { code, message: "", tool_name: call.tool_name, step_no: state.step_no }, finished_at: "" } });
  }
  return out;
}

/** A pending call through the loop's gate: run, refused, answered, or a pause for the user. */
function gatedCall(call: RequestedToolCall, state: RunState, recorded: readonly StoredRunEvent[], at: number, catalog: ToolCatalog): Expected[] {
  const gate = gateCall(state, call, catalog);
  const base = { step_no: state.step_no, call_id: call.call_id };
  switch (gate.kind) {
    case "invoke":
      return invokedCall(call, state, recorded, at);
    case "refuse":
      return [controlledResult(state, call, gate.code, { error_code: gate.code, note: gate.note })];
    case "answer":
      return [controlledResult(state, call, ToolResultCode.ok, { answer: gate.answer })];
    case "ask":
      return [{ type: "ask_user", data: { ...base, question: gate.question, options: gate.options, asked_at: "" } }];
    case "request_confirmation":
      return [
        { type: "confirmation_required", data: { ...base, tool_name: call.tool_name, arguments: call.arguments, asked_at: "", fingerprint: gate.fingerprint } },
      ];
    case "wait":
      return [`the user's ${state.awaiting?.kind ?? "answer"} for call ${call.call_id} (the run waits)`];
    default: {
      const unreachable: never = gate;
      throw new TypeError(`unknown gate ${JSON.stringify(unreachable)}`);
    }
  }
}

/**
 * What the loop would append for `step`, taking the model's answer and the tool's result from the recording
 * at `at` instead of asking for them. Times and runner ids are left empty: `sameDecision` ignores them.
 */
export function expectedEvents(step: NextStep, state: RunState, recorded: readonly StoredRunEvent[], at: number, catalog: ToolCatalog): Expected[] {
  switch (step.kind) {
    case "done":
      return [];
    case "start":
      return [{ type: "run.started", data: { runner_id: "", started_at: "" } }];
    case "fail":
      return [{ type: "run.failed", data: { error: step.error, finished_at: "" } }];
    case "cancel":
      return [{ type: "run.cancelled", data: { error: { code: RunErrorCode.cancelled, message: "" }, finished_at: "" } }];
    case "open_circuit":
      return [{ type: "circuit.opened", data: { step_no: state.step_no, tool_name: step.toolName, failures: step.failures } }];
    case "short_circuit":
      return [shortCircuitResult(state, step.call)];
    case "run_tool":
      return gatedCall(step.call, state, recorded, at, catalog);
    case "call_model":
      return modelStep(step.stepNo, state, recorded, at);
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
    case "ask_user":
      return canonicalJson({ ...want.data, asked_at: "" }) === canonicalJson({ ...got.data, asked_at: "" });
    case "confirmation_required": {
      // A request recorded before approvals were bound carries no fingerprint; it is compared without one.
      const recorded = (got as typeof want).data;
      const wanted = recorded.fingerprint === undefined ? { ...want.data, fingerprint: undefined } : want.data;
      return canonicalJson({ ...wanted, asked_at: "" }) === canonicalJson({ ...recorded, asked_at: "" });
    }
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

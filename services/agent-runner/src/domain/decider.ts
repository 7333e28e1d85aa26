import {
  RunErrorCode,
  ToolResultCode,
  decide,
  deadlineFailure,
  evolve,
  formatMicros,
  isTerminal,
  runCancelled,
  type CompactWindow,
  type LoopEffect,
  type RequestedToolCall,
  type RunCommand,
  type RunEvent,
  type RunState,
  type ToolResult,
} from "@steward/contract";
import { eventsForAnswer } from "./answer";
import type { ModelAnswer } from "./model";
import { nextStep } from "./next-step";
import type { HistoryData } from "./thread-history";
import type { ToolCatalog } from "./tool-catalog";
import { gateCall } from "./tool-gate";
import { controlledResult, eventsForToolOutcome, invocationSucceeded, outcomeUnknownResult, shortCircuitResult, toolCallSent } from "./tool-events";

/** What the world told the loop since its last decision (the model, tool-exec, the thread's earlier runs), or nothing. */
export type Observed =
  | { readonly kind: "nothing" }
  /** `primary`: the profile asked first; an answer from another is recorded as a fallback. */
  | { readonly kind: "model_answer"; readonly stepNo: number; readonly answer: ModelAnswer; readonly primary?: string }
  | { readonly kind: "model_unavailable"; readonly stepNo: number; readonly lastDelivery: boolean; readonly retryAfterMs?: number }
  /** tool-exec's answer to a call, as the `tool_result` it becomes. */
  | { readonly kind: "tool_outcome"; readonly result: ToolResult }
  /** The thread's earlier turns, built and truncated by the caller (`buildHistory`), to record. */
  | { readonly kind: "history_loaded"; readonly history: HistoryData };

/** What the loop feeds the run decider next: an observation, or the compaction its window needs (measured by the loop). */
export type Observation = Observed | CompactWindow;

/** The I/O the loop does after appending a decision's events. */
export type Effect = LoopEffect;

export interface Decision {
  readonly events: readonly RunEvent[];
  readonly effect: Effect;
}

/** What a decision may read besides the run: the clock (µs since the epoch), the tools, who decides. */
export interface DecideContext {
  readonly now: bigint;
  readonly catalog: ToolCatalog;
  readonly runnerId: string;
}

const again = (...events: RunEvent[]): Decision => ({ events, effect: { kind: "decide_again" } });

/**
 * The loop's decision, by the run's one decider (`decide` of the contract): a compaction is its `compact`
 * command, anything else its `observe` command, which the contract hands back to `observe` below. Given the
 * folded run and what was observed, it returns the events to append and the I/O to do next.
 */
export function decideInLoop(state: RunState, observation: Observation, ctx: DecideContext): Decision {
  const command: RunCommand<Observed> = observation.kind === "compact" ? observation : { kind: "observe", observation };
  const decision = decide(command, state, { now: ctx.now, observe: (s, o, now) => observe(s, o, { ...ctx, now }) });
  const effect = decision.effect;
  if (effect.kind === "append" || effect.kind === "refused") throw new TypeError(`the loop's command came back as a writer's (${effect.kind})`);
  return { events: decision.events, effect };
}

/**
 * The loop's share of the run decider: what an observation of the model, a tool or nothing decides. Pure:
 * time, tools and the runner's id come in `ctx`.
 */
function observe(state: RunState, observation: Observed, ctx: DecideContext): Decision {
  if (isTerminal(state)) return { events: [], effect: { kind: "finished" } };
  const at = formatMicros(ctx.now);
  switch (observation.kind) {
    case "nothing":
      return decideFromState(state, ctx);
    case "model_answer": {
      const { stepNo, answer } = observation;
      // An answer to a step the run has moved past (recorded before a reload) is not recorded twice.
      if (stepNo !== state.step_no + 1 || state.pending_calls.length > 0) return decideFromState(state, ctx);
      const fellBack: RunEvent[] =
        observation.primary && answer.provider !== observation.primary
          ? [{ type: "provider.fallback", data: { step_no: stepNo, from: observation.primary, to: answer.provider } }]
          : [];
      return again(...fellBack, ...eventsForAnswer(state, stepNo, answer, at));
    }
    case "model_unavailable": {
      if (deadlineFailure(state, ctx.now)) return again(); // the deadline, not the model, ends the run
      if (!observation.lastDelivery) return { events: [], effect: { kind: "retry_later", afterMs: observation.retryAfterMs } };
      const error = { code: RunErrorCode.modelUnavailable, message: "the model is unavailable", step_no: observation.stepNo };
      return again({ type: "run.failed", data: { error, finished_at: at } });
    }
    case "tool_outcome": {
      const call = state.pending_calls.find((c) => c.call_id === observation.result.data.call_id);
      // An answer for a call no longer pending changes nothing: its result is already recorded.
      if (!call) return decideFromState(state, ctx);
      return again(...eventsForToolOutcome(state, call, ctx.catalog.get(call.tool_name), observation.result, at));
    }
    case "history_loaded":
      // Recorded once: a history loaded again after it was recorded (a reload) changes nothing.
      if (!state.thread_id || state.history_loaded) return decideFromState(state, ctx);
      return again({ type: "context.history", data: observation.history });
    default: {
      const unreachable: never = observation;
      throw new TypeError(`unknown observation ${JSON.stringify(unreachable)}`);
    }
  }
}

function decideFromState(state: RunState, ctx: DecideContext): Decision {
  const at = formatMicros(ctx.now);
  const step = nextStep(state, ctx.now, ctx.catalog);
  switch (step.kind) {
    case "done":
      return { events: [], effect: { kind: "finished" } };
    case "start":
      return again({ type: "run.started", data: { runner_id: ctx.runnerId, started_at: at } });
    case "fail":
      return again({ type: "run.failed", data: { error: step.error, finished_at: at } });
    case "cancel":
      return again(runCancelled(at));
    case "open_circuit":
      return again({ type: "circuit.opened", data: { step_no: state.step_no, tool_name: step.toolName, failures: step.failures } });
    case "short_circuit":
      return again(shortCircuitResult(state, step.call));
    case "run_tool":
      return gatedCall(state, step.call, ctx);
    case "load_history":
      return { events: [], effect: { kind: "load_history" } };
    case "finish_invocation":
      return again(invocationSucceeded(state, at));
    case "call_model":
      return { events: [], effect: { kind: "call_model", stepNo: step.stepNo } };
    default: {
      const unreachable: never = step;
      throw new TypeError(`unknown step ${JSON.stringify(unreachable)}`);
    }
  }
}

/** One pending call through the gate: sent to tool-exec, refused, answered, or a pause for the user. */
function gatedCall(state: RunState, call: RequestedToolCall, ctx: DecideContext): Decision {
  const gate = gateCall(state, call, ctx.catalog);
  const at = formatMicros(ctx.now);
  const waiting = (event: RunEvent): Decision => ({ events: [event], effect: { kind: "wait_for_user" } });
  switch (gate.kind) {
    case "invoke": {
      const tool = ctx.catalog.get(call.tool_name);
      const invoke: Effect = { kind: "invoke_tool", call, exploration: tool?.exploration ?? false };
      if (!state.in_flight.includes(call.call_id)) return { events: [toolCallSent(state, call)], effect: invoke };
      // Sent before, by a runner that died: tool-exec answers an idempotent call from its record; any other
      // may have run and keeps no record, so it is never run blindly a second time.
      return tool?.idempotent ? { events: [], effect: invoke } : again(outcomeUnknownResult(state, call));
    }
    case "refuse":
      return again(controlledResult(state, call, gate.code, { error_code: gate.code, note: gate.note }));
    case "answer":
      return again(controlledResult(state, call, ToolResultCode.ok, { answer: gate.answer }));
    case "ask":
      return waiting({
        type: "ask_user",
        data: { step_no: state.step_no, call_id: call.call_id, question: gate.question, options: gate.options, asked_at: at },
      });
    case "request_confirmation":
      return waiting({
        type: "confirmation_required",
        data: {
          step_no: state.step_no,
          call_id: call.call_id,
          tool_name: call.tool_name,
          arguments: call.arguments,
          asked_at: at,
          fingerprint: gate.fingerprint,
        },
      });
    case "wait":
      return { events: [], effect: { kind: "wait_for_user" } };
    default: {
      const unreachable: never = gate;
      throw new TypeError(`unknown gate ${JSON.stringify(unreachable)}`);
    }
  }
}

/**
 * Decides on, as far as the run can go without I/O: the decision on `observation`, then on nothing for as
 * long as the effect is to decide again. The events come back together so the loop appends them in one
 * commit (a model answer with the marker of its first call; a result with the next call's marker).
 */
export function decideThrough(state: RunState, observation: Observation, ctx: DecideContext): Decision & { readonly state: RunState } {
  let decision = decideInLoop(state, observation, ctx);
  const events = [...decision.events];
  let folded = decision.events.reduce(evolve, state);
  while (decision.effect.kind === "decide_again") {
    decision = decideInLoop(folded, { kind: "nothing" }, ctx);
    if (decision.effect.kind === "decide_again" && decision.events.length === 0) throw new Error("the decider would decide again without any change");
    events.push(...decision.events);
    folded = decision.events.reduce(evolve, folded);
  }
  return { events, effect: decision.effect, state: folded };
}

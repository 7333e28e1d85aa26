import {
  Limits,
  RunErrorCode,
  ToolResultCode,
  consecutiveFailures,
  deadlineFailure,
  detectCycle,
  type RequestedToolCall,
  type RunError,
  type RunState,
} from "@steward/contract";

export type NextStep =
  | { readonly kind: "done" }
  | { readonly kind: "start" }
  | { readonly kind: "fail"; readonly error: RunError }
  | { readonly kind: "run_tool"; readonly call: RequestedToolCall }
  | { readonly kind: "open_circuit"; readonly toolName: string; readonly failures: number }
  | { readonly kind: "short_circuit"; readonly call: RequestedToolCall }
  | { readonly kind: "cancel" }
  /** A run in a thread, before its first model call: load the thread's earlier turns (docs/threads.md). */
  | { readonly kind: "load_history" }
  /** An invocation run (a capability invoked directly) whose calls are all answered: it ends with their outcome. */
  | { readonly kind: "finish_invocation" }
  | { readonly kind: "call_model"; readonly stepNo: number };

/**
 * The rules of the loop with nothing new observed: from the folded state and the clock, what comes next.
 * Pure; `decide` (decider.ts) turns the step into events and the I/O to do.
 */
/** The registered tools: a set of names or the catalog itself. */
export type Registered = { has(name: string): boolean };

export function nextStep(state: RunState, nowMicros: bigint, registered: Registered): NextStep {
  if (state.status === "succeeded" || state.status === "failed" || state.status === "cancelled") return { kind: "done" };
  if (state.status === "new") throw new RangeError("a run without run.queued cannot be driven");
  if (state.cancel_requested) return { kind: "cancel" };
  const overdue = deadlineFailure(state, nowMicros);
  if (overdue) return { kind: "fail", error: overdue };
  if (state.status === "queued") return { kind: "start" };
  // Once, before the first model call; a run that made model calls without it (none was recorded so) goes on so.
  // An invocation run asks no model, so it has no use for the thread's turns.
  if (state.thread_id && !state.history_loaded && state.step_no === 0 && !state.invocation) return { kind: "load_history" };
  const cycle = detectCycle(state.tool_history);
  if (cycle) {
    return {
      kind: "fail",
      error: {
        code: RunErrorCode.cycleDetected,
        message: "the tool calls repeat in a cycle",
        tool_name: cycle.tool_name,
        cycle_length: cycle.length,
        step_no: state.step_no,
      },
    };
  }
  const lastTool = state.tool_history[state.tool_history.length - 1];
  if (lastTool && !state.open_circuits.includes(lastTool.tool_name)) {
    const failures = consecutiveFailures(state.tool_history, lastTool.tool_name, ToolResultCode.toolFailed);
    if (failures >= Limits.circuitThreshold) return { kind: "open_circuit", toolName: lastTool.tool_name, failures };
  }
  const call = state.pending_calls[0];
  if (call) {
    if (state.open_circuits.includes(call.tool_name)) return { kind: "short_circuit", call };
    if (!registered.has(call.tool_name)) {
      return {
        kind: "fail",
        error: {
          code: RunErrorCode.unknownTool,
          message: state.invocation ? "the invoked tool is not registered" : "the model called a tool that is not registered",
          tool_name: call.tool_name,
          step_no: state.step_no,
        },
      };
    }
    if (!isJsonObject(call.arguments)) {
      return {
        kind: "fail",
        error: {
          code: RunErrorCode.outputUnparseable,
          message: "the model's tool arguments are not a JSON object",
          tool_name: call.tool_name,
          step_no: state.step_no,
        },
      };
    }
    return { kind: "run_tool", call };
  }
  // The invoker, not a model, asked for the calls: once they are answered there is nobody to ask what next.
  if (state.invocation) return { kind: "finish_invocation" };
  if (state.step_no >= Limits.stepBudget) {
    return { kind: "fail", error: { code: RunErrorCode.stepBudgetSpent, message: "the step budget is spent", step_no: state.step_no } };
  }
  return { kind: "call_model", stepNo: state.step_no + 1 };
}

function isJsonObject(text: string): boolean {
  try {
    const v: unknown = JSON.parse(text || "{}");
    return typeof v === "object" && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}

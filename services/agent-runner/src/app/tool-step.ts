import { RunErrorCode, ToolResultCode, nowMicros, parseMicros, type RequestedToolCall, type RunEvent, type RunState, type StoredRunEvent } from "@steward/contract";
import type { Logger } from "@steward/platform";
import type { ToolExecApi } from "@steward/proto";
import type { ToolCatalog } from "../domain/tool-catalog";
import type { CrashPoints } from "./crash-points";
import { invokeTool } from "./invoke-tool";
import type { RunContext } from "./run-context";

export interface ToolStepDeps {
  readonly toolExec: ToolExecApi;
  readonly catalog: ToolCatalog;
  readonly crash: CrashPoints;
}

/**
 * Runs one pending tool call through tool-exec: records `tool_call` (the in-flight marker) unless a previous
 * attempt did, invokes, and appends the decision and the result, plus the run's failure when an
 * AbortOnDeny tool was denied. A call found in flight is sent again; tool-exec answers it from its
 * idempotency record.
 */
export async function runToolStep(
  deps: ToolStepDeps,
  ctx: RunContext,
  state: RunState,
  events: readonly StoredRunEvent[],
  call: RequestedToolCall,
  append: (more: RunEvent[]) => Promise<void>,
  log: Logger,
): Promise<void> {
  // Only this step's marker counts: a model may reuse a call id in a later step for another call.
  const inFlight = events.some((e) => e.type === "tool_call" && e.data.call_id === call.call_id && e.data.step_no === state.step_no);
  const tool = deps.catalog.get(call.tool_name);
  if (inFlight && !tool?.idempotent) {
    // It may have run before the crash, and it keeps no record: never run it blindly a second time.
    await append([
      controlledResult(state, call, ToolResultCode.outcomeUnknown, {
        error_code: ToolResultCode.outcomeUnknown,
        note: "this call was interrupted and may or may not have taken effect; check before repeating it",
      }),
    ]);
    log.info({ step_no: state.step_no, tool: call.tool_name }, "outcome of an interrupted call is unknown");
    return;
  }
  if (!inFlight) {
    await append([
      { type: "tool_call", data: { step_no: state.step_no, call_id: call.call_id, tool_name: call.tool_name, arguments: call.arguments } },
    ]);
  }
  const remaining = state.deadline_at ? Number((parseMicros(state.deadline_at) - parseMicros(nowMicros())) / 1000n) : 60_000;
  const pending = invokeTool(deps.toolExec, ctx, state.step_no, call, tool?.exploration ?? false, remaining);
  deps.crash.reached("during_tool");
  const outcome = await pending;
  const { decision, fingerprint } = outcome.event.data;
  const more: RunEvent[] = [];
  if (outcome.event.data.result_code !== ToolResultCode.invalidArguments) {
    more.push({
      type: "tool.decided",
      data: {
        step_no: state.step_no,
        call_id: call.call_id,
        tool_name: call.tool_name,
        policy_point: tool?.policyPoint ?? "",
        fingerprint,
        permit: decision.permit,
        code: decision.code,
        policy_ids: decision.policy_ids,
      },
    });
  }
  more.push(outcome.event);
  if (!decision.permit && tool?.abortOnDeny && outcome.event.data.result_code !== ToolResultCode.invalidArguments) {
    more.push({
      type: "run.failed",
      data: {
        error: {
          code: Number(decision.code) || RunErrorCode.policyDenied,
          message: "a tool the run depends on was denied",
          tool_name: call.tool_name,
          step_no: state.step_no,
        },
        finished_at: nowMicros(),
      },
    });
  }
  await append(more);
  deps.crash.reached("after_tool");
  log.info(
    { step_no: state.step_no, tool: call.tool_name, result_code: outcome.event.data.result_code, permit: decision.permit, replayed: outcome.replayed },
    "tool step",
  );
}

/** A result the runner gives the model without running anything (refusals, answers, an open circuit). */
export function controlledResult(state: RunState, call: RequestedToolCall, code: string, result: unknown): RunEvent {
  return {
    type: "tool_result",
    data: {
      step_no: state.step_no,
      call_id: call.call_id,
      tool_name: call.tool_name,
      fingerprint: "",
      decision: { permit: false, code: "", policy_ids: [] },
      result_code: code,
      result,
      evidence: [],
    },
  };
}

/** The result of a call whose tool's circuit is open: 60403, and nothing runs. */
export function shortCircuitResult(state: RunState, call: RequestedToolCall): RunEvent {
  return controlledResult(state, call, ToolResultCode.circuitOpen, {
    error_code: ToolResultCode.circuitOpen,
    note: "this tool failed repeatedly and is disabled for the rest of the run",
  });
}

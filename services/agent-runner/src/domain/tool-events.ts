import {
  PROPOSE_KNOWLEDGE_TOOL,
  PayloadLimits,
  RunErrorCode,
  ToolResultCode,
  canonicalJson,
  eventBytes,
  type RequestedToolCall,
  type RunEvent,
  type RunState,
  type ToolResult,
} from "@steward/contract";
import type { ToolInfo } from "./tool-catalog";

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

/** A call found in flight whose tool keeps no record: it may have run, so it is never run blindly again. */
export function outcomeUnknownResult(state: RunState, call: RequestedToolCall): RunEvent {
  return controlledResult(state, call, ToolResultCode.outcomeUnknown, {
    error_code: ToolResultCode.outcomeUnknown,
    note: "this call was interrupted and may or may not have taken effect; check before repeating it",
  });
}

/** The marker that a call is sent to tool-exec: a crash after it finds the call in flight. */
export function toolCallSent(state: RunState, call: RequestedToolCall): RunEvent {
  return { type: "tool_call", data: { step_no: state.step_no, call_id: call.call_id, tool_name: call.tool_name, arguments: call.arguments } };
}

/**
 * What tool-exec's answer becomes: the PDP's decision (not for arguments the tool's schema refused: no
 * decision was asked for), the result, and the run's failure when an AbortOnDeny tool was denied. Every call
 * of an invocation run is AbortOnDeny: there is no model to tell of the denial, and the invoker asked for the
 * calls as one capability, so the rest of them must not run without the one denied.
 */
export function eventsForToolOutcome(state: RunState, call: RequestedToolCall, tool: ToolInfo | undefined, result: ToolResult, finishedAt: string): RunEvent[] {
  const { decision, fingerprint, result_code } = result.data;
  const refusedArguments = result_code === ToolResultCode.invalidArguments;
  const out: RunEvent[] = [];
  if (!refusedArguments) {
    out.push({
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
  out.push({ type: "tool_result", data: { ...result.data, step_no: state.step_no, call_id: call.call_id, tool_name: call.tool_name } });
  const proposed = proposalOf(call, result);
  if (proposed) out.push({ type: "knowledge.proposed", data: { step_no: state.step_no, call_id: call.call_id, ...proposed } });
  const abortOnDeny = Boolean(tool?.abortOnDeny) || state.invocation !== null;
  if (!decision.permit && abortOnDeny && !refusedArguments) {
    out.push({
      type: "run.failed",
      data: {
        error: {
          code: Number(decision.code) || RunErrorCode.policyDenied,
          message: "a tool the run depends on was denied",
          tool_name: call.tool_name,
          step_no: state.step_no,
        },
        finished_at: finishedAt,
      },
    });
  }
  return out;
}

/**
 * How an invocation run ends once its calls are answered: the capability, its outcome (`invocation_outcome`:
 * the first answer that was not ok, else the last) as canonical JSON text, and the evidence gathered. A refusal
 * (a rejected confirmation, a tool not offered) is an outcome too: the run did what was asked and says so.
 */
export function invocationSucceeded(state: RunState, finishedAt: string): RunEvent {
  const outcome = state.invocation_outcome;
  const succeeded = (result: unknown): RunEvent => {
    const text = canonicalJson({ capability_id: state.invocation?.capability_id ?? "", result_code: outcome?.result_code ?? null, result });
    return { type: "run.succeeded", data: { output: { text, evidence: state.evidence }, finished_at: finishedAt } };
  };
  const whole = succeeded(outcome?.result ?? null);
  // A result that fit its tool_result may not fit again as escaped text beside the evidence; the store would
  // refuse the event on every delivery. The result stays whole in its tool_result, which the output names.
  if (eventBytes(whole) <= PayloadLimits.eventBytes) return whole;
  return succeeded({
    result_cut: { note: "the result is too large for the run's output; it is whole in the call's tool_result", call_id: outcome?.call_id ?? "" },
  });
}

/** The proposal a permitted, successful propose_knowledge call queued (its result names it), else null. */
function proposalOf(call: RequestedToolCall, result: ToolResult): { proposal_id: string; title: string } | null {
  if (call.tool_name !== PROPOSE_KNOWLEDGE_TOOL || result.data.result_code !== ToolResultCode.ok || !result.data.decision.permit) return null;
  const r = result.data.result as { proposal_id?: unknown; title?: unknown } | null;
  return typeof r?.proposal_id === "string" ? { proposal_id: r.proposal_id, title: typeof r.title === "string" ? r.title : "" } : null;
}

import { ToolResultCode, type Evidence, type RequestedToolCall, type RunState, type ToolResult } from "@steward/contract";
import type { RunContext } from "./run-context";
import { ToolArgumentsRefusedError, type ToolExec } from "./tool-exec";

/** tool-exec could not be reached; the run is retried on a later delivery. */
export class ToolExecUnavailableError extends Error {
  constructor(options?: { cause?: unknown }) {
    super("tool-exec is unavailable", options);
    this.name = "ToolExecUnavailableError";
  }
}

const INVOKE_DEADLINE_MS = 60_000;

/** The tool_result event of a call: its step and names, and what tool-exec answered. */
function toolResult(stepNo: number, call: RequestedToolCall, outcome: Omit<ToolResult["data"], "step_no" | "call_id" | "tool_name">): ToolResult {
  return { type: "tool_result", data: { step_no: stepNo, call_id: call.call_id, tool_name: call.tool_name, ...outcome } };
}

/**
 * Calls tool-exec and turns its answer into the tool_result event. Arguments that fail the tool's schema
 * become a result the model can correct; transport failures are retryable errors.
 */
export async function invokeTool(
  toolExec: ToolExec,
  ctx: RunContext,
  stepNo: number,
  call: RequestedToolCall,
  exploration: boolean,
  /** The run's remaining time: tool-exec's tools stop within it. */
  runRemainingMs: number,
  /** The MCP session the run was started from, if any: tool-exec names it (and its mode) in the PDP's decision. */
  mcp: Pick<RunState, "mcp_session_id" | "mcp_mode"> = { mcp_session_id: null, mcp_mode: null },
  /** Sends the call held: tool-exec runs nothing of it until this settles true, and drops it on false. */
  go?: Promise<boolean>,
): Promise<{ event: ToolResult; replayed: boolean }> {
  try {
    const res = await toolExec.invoke(
      {
        runId: ctx.runId,
        tenantId: ctx.tenantId,
        userId: ctx.userId,
        stepNo,
        callId: call.call_id,
        toolName: call.tool_name,
        argumentsJson: call.arguments,
        elevationSessionId: ctx.elevationSessionId ?? "",
        mcpSessionId: mcp.mcp_session_id ?? "",
        mcpMode: mcp.mcp_mode ?? "",
      },
      { deadlineMs: Math.max(1000, Math.min(INVOKE_DEADLINE_MS, runRemainingMs)), traceparent: ctx.traceparent, go },
    );
    const body = JSON.parse(res.resultJson) as { result: unknown; evidence: Evidence[] };
    return {
      replayed: res.replayed,
      event: toolResult(stepNo, call, {
        fingerprint: res.fingerprint,
        decision: { permit: res.decision?.permit ?? false, code: res.decision?.code ?? "", policy_ids: res.decision?.policyIds ?? [] },
        result_code: res.resultCode,
        result: body.result,
        evidence: body.evidence ?? [],
        ...(res.nextState ? { next_state: res.nextState } : {}),
        ...(exploration && res.decision?.permit ? { exploration: true } : {}),
        // For people reading the run (the console's waterfall); the model never sees them.
        timings: { decision_ms: res.decisionMs, tool_ms: res.toolMs },
      }),
    };
  } catch (err) {
    if (err instanceof ToolArgumentsRefusedError) {
      // Refused before any decision or run: a result the model can correct.
      return {
        replayed: false,
        event: toolResult(stepNo, call, {
          fingerprint: "",
          decision: { permit: false, code: "", policy_ids: [] },
          result_code: ToolResultCode.invalidArguments,
          result: { error_code: ToolResultCode.invalidArguments, note: err.message },
          evidence: [],
        }),
      };
    }
    throw new ToolExecUnavailableError({ cause: err });
  }
}

import { inSpan, otherLabelValue, SpanKind, traceparentFor, tracingOn } from "@steward/platform";
import type { InvokeHandler } from "../../app/invoke-tool";

/**
 * One server span per tool call tool-exec carries out (run-owner check, PDP question, the tool), a child of
 * the runner's tool-call span (the call's traceparent): by tool name and result code, never the arguments
 * or the result. The PDP is asked with this span's traceparent. A name the registry does not hold is "other".
 */
export function tracedInvoke(invoke: InvokeHandler, registered: ReadonlySet<string>): InvokeHandler {
  return (cmd) => {
    if (!tracingOn()) return invoke(cmd);
    const tool = registered.has(cmd.toolName) ? cmd.toolName : otherLabelValue;
    return inSpan(
      "steward.v1.ToolExec/Invoke",
      {
        kind: SpanKind.SERVER,
        parent: cmd.traceparent,
        attributes: {
          "rpc.system": "grpc",
          "rpc.service": "steward.v1.ToolExec",
          "rpc.method": "Invoke",
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": tool,
          "gen_ai.tool.call.id": cmd.callId,
          "steward.step_no": cmd.stepNo,
        },
      },
      async (span) => {
        const outcome = await invoke({ ...cmd, traceparent: traceparentFor(span, cmd.traceparent) });
        span.setAttributes({
          "steward.tool.result_code": outcome.resultCode,
          "steward.tool.replayed": outcome.replayed,
          "steward.policy.effect": outcome.decision.permit ? "permit" : "deny",
        });
        return outcome;
      },
    );
  };
}

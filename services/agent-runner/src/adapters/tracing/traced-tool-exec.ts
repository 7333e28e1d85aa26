import { otherLabelValue, inSpan, SpanKind, traceparentFor, tracingOn } from "@steward/platform";
import type { ToolExecApi } from "@steward/proto";

/**
 * One client span per tool call as the runner makes it (the wait for tool-exec and its breaker included), by
 * tool name and result code; never the arguments or the result. tool-exec receives this span's traceparent
 * in the call's metadata, so its spans (and the PDP's) are this span's children. A name the model made up
 * is "other": span names stay few.
 */
export function tracedToolExec(api: ToolExecApi, known: ReadonlySet<string>): ToolExecApi {
  return {
    listTools: (options) => api.listTools(options),
    invoke(req, options) {
      if (!tracingOn()) return api.invoke(req, options);
      const tool = known.has(req.toolName) ? req.toolName : otherLabelValue;
      return inSpan(
        `execute_tool ${tool}`,
        {
          kind: SpanKind.CLIENT,
          parent: options?.traceparent,
          attributes: {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.call.id": req.callId,
            "rpc.system": "grpc",
            "rpc.service": "steward.v1.ToolExec",
            "rpc.method": "Invoke",
            "steward.step_no": req.stepNo,
          },
        },
        async (span) => {
          const res = await api.invoke(req, { ...options, traceparent: traceparentFor(span, options?.traceparent) });
          span.setAttributes({ "steward.tool.result_code": res.resultCode, "steward.tool.replayed": res.replayed });
          return res;
        },
      );
    },
    state: () => api.state(),
    close: () => api.close(),
  };
}

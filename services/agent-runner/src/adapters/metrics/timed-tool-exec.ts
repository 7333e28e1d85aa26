import { metricCatalog, otherLabelValue, secondsSince, type Metrics } from "@steward/platform";
import type { ToolExecApi } from "@steward/proto";

/**
 * Times each tool call as the runner makes it (tool-exec, the PDP and the tool, the breaker and the wait for
 * tool-exec included; for a call sent held, from its sending, beside the commit that records it) by tool and
 * result code. A held call the runner dropped is not counted: it was not made. `known` holds the names tool-exec
 * listed: a name the model made up is counted as "other".
 */
export function timedToolExec(api: ToolExecApi, metrics: Metrics, known: ReadonlySet<string>): ToolExecApi {
  const duration = metrics.histogram(metricCatalog.runnerToolCallDuration);
  return {
    listTools: (options) => api.listTools(options),
    async invoke(req, options) {
      const started = performance.now();
      const tool = known.has(req.toolName) ? req.toolName : otherLabelValue;
      try {
        const res = await api.invoke(req, options);
        duration.observe({ tool, result: res.resultCode }, secondsSince(started));
        return res;
      } catch (err) {
        const dropped = options?.go !== undefined && !(await options.go);
        if (!dropped) duration.observe({ tool, result: "error" }, secondsSince(started));
        throw err;
      }
    },
    state: () => api.state(),
    close: () => api.close(),
  };
}

import { metricCatalog, otherLabelValue, secondsSince, type Metrics } from "@steward/platform";
import type { InvokeHandler } from "../../app/invoke-tool";

/**
 * Times every tool call (run-owner check, PDP decision, the tool) by tool and result code, as an
 * interceptor around the handler. A name the registry does not hold is counted as "other": callers choose
 * the name, the registry bounds it. A call that ends in an error (nothing recorded) is counted as "error".
 */
export function withInvokeMetrics(invoke: InvokeHandler, metrics: Metrics, registered: ReadonlySet<string>): InvokeHandler {
  const duration = metrics.histogram(metricCatalog.toolCallDuration);
  return async (cmd) => {
    const started = performance.now();
    const tool = registered.has(cmd.toolName) ? cmd.toolName : otherLabelValue;
    try {
      const outcome = await invoke(cmd);
      duration.observe({ tool, result: outcome.resultCode }, secondsSince(started));
      return outcome;
    } catch (err) {
      duration.observe({ tool, result: "error" }, secondsSince(started));
      throw err;
    }
  };
}

import { metricCatalog, noCode, secondsSince, type Metrics } from "@steward/platform";
import type { DecisionHandler } from "@steward/pdp";

/**
 * Counts decisions by effect and code and times each one (facts, evaluation and the decision log), as an
 * interceptor around the handler: the decision itself is untouched.
 */
export function withDecisionMetrics(handle: DecisionHandler, metrics: Metrics): DecisionHandler {
  const decisions = metrics.counter(metricCatalog.policyDecisions);
  const duration = metrics.histogram(metricCatalog.policyDecisionDuration);
  return async (query) => {
    const started = performance.now();
    try {
      const decision = await handle(query);
      const effect = decision.permit ? "permit" : "deny";
      decisions.inc({ effect, code: decision.code || noCode });
      duration.observe({ effect }, secondsSince(started));
      return decision;
    } catch (err) {
      duration.observe({ effect: "error" }, secondsSince(started));
      throw err;
    }
  };
}

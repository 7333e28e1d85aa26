import { metricCatalog, secondsSince, type Metrics } from "@steward/platform";
import type { PolicyDecisionApi } from "@steward/proto";

/** Times each question to the PDP by its answer's effect ("error": no answer, which the caller treats as a deny). */
export function withPdpMetrics(pdp: PolicyDecisionApi, metrics: Metrics): PolicyDecisionApi {
  const duration = metrics.histogram(metricCatalog.pdpAskDuration);
  return {
    async decide(req, options) {
      const started = performance.now();
      try {
        const answer = await pdp.decide(req, options);
        duration.observe({ effect: answer.permit ? "permit" : "deny" }, secondsSince(started));
        return answer;
      } catch (err) {
        duration.observe({ effect: "error" }, secondsSince(started));
        throw err;
      }
    },
    state: () => pdp.state(),
    close: () => pdp.close(),
  };
}

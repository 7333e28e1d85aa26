import { metricCatalog, secondsSince, type Metrics } from "@steward/platform";
import { ModelCallAbortedError, ModelUnavailableError, type ModelProvider } from "../../domain/model";

/**
 * Times each model call by the profile that answered ("primary", "fallback", "scripted": configuration
 * bounds them) and its outcome. The model's own name is left out: a label must not follow free settings.
 */
export function timedProvider(provider: ModelProvider, metrics: Metrics): ModelProvider {
  const duration = metrics.histogram(metricCatalog.modelCallDuration);
  return {
    name: provider.name,
    primary: provider.primary,
    async complete(request) {
      const started = performance.now();
      try {
        const answer = await provider.complete(request);
        duration.observe({ profile: answer.provider, outcome: "ok" }, secondsSince(started));
        return answer;
      } catch (err) {
        const outcome = err instanceof ModelUnavailableError ? "unavailable" : err instanceof ModelCallAbortedError ? "aborted" : "error";
        duration.observe({ profile: provider.primary ?? provider.name, outcome }, secondsSince(started));
        throw err;
      }
    },
  };
}

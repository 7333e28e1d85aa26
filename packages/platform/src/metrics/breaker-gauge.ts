import { metricCatalog } from "./catalog";
import type { Metrics } from "./registry";

export type BreakerState = "closed" | "open" | "half_open";
const states: readonly BreakerState[] = ["closed", "open", "half_open"];

/**
 * The breaker gauge; the returned function reports one breaker's new state (1 for it, 0 for the others).
 * A breaker reports "closed" when it is made, so that every breaker has a series from the start.
 */
export function breakerGauge(metrics: Metrics): (breaker: string, state: BreakerState) => void {
  const gauge = metrics.gauge(metricCatalog.breakerState);
  return (breaker, state) => {
    for (const s of states) gauge.set({ breaker, state: s }, s === state ? 1 : 0);
  };
}

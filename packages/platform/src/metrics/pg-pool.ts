import { metricCatalog } from "./catalog";
import type { Metrics } from "./registry";

/** What the pool gauge reads: `pg.Pool`'s own counters. */
export interface PoolCounts {
  readonly totalCount: number;
  readonly idleCount: number;
  readonly waitingCount: number;
}

/** Each pool's total, idle and waiting clients, read at scrape time (no query). `pools`: by a fixed name. */
export function watchPools(metrics: Metrics, pools: Readonly<Record<string, PoolCounts>>): void {
  metrics.gauge(metricCatalog.pgPoolClients, (gauge) => {
    for (const [pool, p] of Object.entries(pools)) {
      gauge.set({ pool, state: "total" }, p.totalCount);
      gauge.set({ pool, state: "idle" }, p.idleCount);
      gauge.set({ pool, state: "waiting" }, p.waitingCount);
    }
  });
}

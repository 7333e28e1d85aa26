import { metricCatalog, type Metrics, type Pool } from "@steward/platform";
import { UNPUBLISHED_SQL } from "@steward/store";
import { atMostEvery } from "./throttle";

/**
 * One cheap statement (what is not yet on the bus through partial indexes; the outbox rows published since the
 * last poll through the primary key from the lowest id then pending): the backlog, the age of its oldest message,
 * and each newly published outbox row's lag from commit to publish. The runs' event copies keep no publish time,
 * so the lag is sampled from the commands (the relays' and the gateway's own); the backlog and its age count both.
 */
const POLL = `
WITH unpublished AS (${UNPUBLISHED_SQL}),
pending AS (SELECT min(id) AS low FROM outbox WHERE published_at IS NULL AND set_aside_at IS NULL)
SELECT u.n, u.oldest, coalesce(p.low, (SELECT coalesce(max(id), 0) + 1 FROM outbox)) AS low, clock_timestamp()::text AS at,
       ARRAY(SELECT extract(epoch FROM o.published_at - o.created_at)::float8 FROM outbox o
              WHERE $1::bigint IS NOT NULL AND o.id >= $1::bigint AND o.published_at > $2::timestamptz
              ORDER BY o.id LIMIT $3) AS lags
  FROM pending p, unpublished u`;

/** Lags sampled per poll at most; a burst beyond it is under-sampled, never a slow statement. */
const maxSamples = 5000;

/**
 * The outbox backlog, its oldest row's age and the publish lag, polled at scrape time at most every
 * `minIntervalMs` (default 5000): never a query on a run's path. The table is shared, so every runner sees
 * the same rows: aggregate with max, not sum. A row committed while a poll runs may be missed by the lag
 * sample (it is a sample).
 */
export function watchOutbox(pool: Pool, metrics: Metrics, options: { minIntervalMs?: number } = {}): void {
  let since: { low: string; at: string } | null = null;
  const poll = atMostEvery(options.minIntervalMs ?? 5000, async () => {
    try {
      const { rows } = await pool.query<{ n: number; oldest: number | null; low: string; at: string; lags: number[] }>(POLL, [
        since?.low ?? null,
        since?.at ?? null,
        maxSamples,
      ]);
      const r = rows[0];
      for (const seconds of r.lags) lag.observe({}, Math.max(0, seconds));
      since = { low: r.low, at: r.at };
      return { backlog: r.n, oldest: r.oldest ?? 0 };
    } catch {
      return null; // PostgreSQL away: the gauges are absent until it answers
    }
  });
  const lag = metrics.histogram(metricCatalog.outboxPublishLag, async () => void (await poll()));
  metrics.gauge(metricCatalog.outboxBacklog, async (gauge) => {
    const seen = await poll();
    gauge.reset();
    if (seen) gauge.set({}, seen.backlog);
  });
  metrics.gauge(metricCatalog.outboxOldestAge, async (gauge) => {
    const seen = await poll();
    gauge.reset();
    if (seen) gauge.set({}, seen.oldest);
  });
}

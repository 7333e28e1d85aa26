import type { Pool } from "pg";
import { UNPUBLISHED_SQL } from "../outbox/unpublished";
import type { OpenRuns } from "./tenant-backlog";

/** The platform's open runs, and what is not yet on the bus. */
export interface Backlog extends OpenRuns {
  /** Messages not yet on the bus: outbox rows pending and the runs' events not yet published. */
  readonly outboxBacklog: number;
  /** Seconds the oldest of them has waited; null when there is none. */
  readonly outboxOldestAgeSeconds: number | null;
  /** Outbox rows NATS refused and the relay set aside (never published; each with its reason in `last_error`). */
  readonly outboxSetAside: number;
}

/** What is waiting, platform-wide: open runs by state and the messages not yet on the bus. One round trip. */
export async function readBacklog(pool: Pool): Promise<Backlog> {
  const { rows } = await pool.query<{
    queued: number;
    running: number;
    awaiting: number;
    oldest_queued: number | null;
    outbox: number;
    oldest_outbox: number | null;
    set_aside: number;
  }>(
    `WITH unpublished AS (${UNPUBLISHED_SQL})
     SELECT
       (SELECT count(*) FROM runs WHERE state = 'queued')::int AS queued,
       (SELECT count(*) FROM runs WHERE state = 'running')::int AS running,
       (SELECT count(*) FROM runs WHERE state IN ('awaiting_input', 'awaiting_confirmation'))::int AS awaiting,
       (SELECT extract(epoch FROM clock_timestamp() - min(created_at))::float8 FROM runs WHERE state = 'queued') AS oldest_queued,
       (SELECT n FROM unpublished) AS outbox,
       (SELECT oldest FROM unpublished) AS oldest_outbox,
       (SELECT count(*) FROM outbox WHERE set_aside_at IS NOT NULL)::int AS set_aside`,
  );
  const r = rows[0];
  const round = (v: number | null) => (v === null ? null : Math.round(v * 10) / 10);
  return {
    queued: r.queued,
    running: r.running,
    awaiting: r.awaiting,
    oldestQueuedAgeSeconds: round(r.oldest_queued),
    outboxBacklog: r.outbox,
    outboxOldestAgeSeconds: round(r.oldest_outbox),
    outboxSetAside: r.set_aside,
  };
}

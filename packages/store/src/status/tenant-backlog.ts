import type { Pool } from "pg";

/** Open runs by state: the platform's, or one tenant's. */
export interface OpenRuns {
  readonly queued: number;
  readonly running: number;
  readonly awaiting: number;
  /** Seconds the oldest queued run has waited since it was created; null when none is queued. */
  readonly oldestQueuedAgeSeconds: number | null;
}

/** One tenant's open runs: what its administrators may see of the queue (never another tenant's counts). */
export type TenantBacklog = OpenRuns;

/** The tenant's open runs by state, from the index of open runs (migration 034). One round trip. */
export async function readTenantBacklog(pool: Pool, tenantId: string): Promise<TenantBacklog> {
  const { rows } = await pool.query<{ queued: number; running: number; awaiting: number; oldest_queued: number | null }>(
    `SELECT count(*) FILTER (WHERE state = 'queued')::int AS queued,
            count(*) FILTER (WHERE state = 'running')::int AS running,
            count(*) FILTER (WHERE state IN ('awaiting_input', 'awaiting_confirmation'))::int AS awaiting,
            extract(epoch FROM clock_timestamp() - min(created_at) FILTER (WHERE state = 'queued'))::float8 AS oldest_queued
       FROM runs
      WHERE tenant_id = $1 AND state IN ('queued', 'running', 'awaiting_input', 'awaiting_confirmation')`,
    [tenantId],
  );
  const r = rows[0];
  return {
    queued: r.queued,
    running: r.running,
    awaiting: r.awaiting,
    oldestQueuedAgeSeconds: r.oldest_queued === null ? null : Math.round(r.oldest_queued * 10) / 10,
  };
}

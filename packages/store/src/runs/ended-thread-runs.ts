import type { Pool, PoolClient } from "pg";
import type { IsoMicros } from "@steward/contract";

/**
 * The runs of a thread that ended by `endedBy` (the asking run's creation): the earlier turns a run in that
 * thread is shown. A fork's inherited runs come first, in the order its thread.forked listed them (its source's
 * turns up to the fork), then the runs added to the thread itself, oldest first by creation. Only the creator's
 * runs of the tenant (a thread is its creator's); never the asking run, a run still active, or one that ended
 * after the asking run was created. A thread's runs are never another thread's forks' runs (those name the fork).
 */
export async function listEndedThreadRuns(
  db: Pool | PoolClient,
  query: { tenantId: string; createdBy: string; threadId: string; runId: string; endedBy: IsoMicros },
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `WITH turns AS (
       SELECT u.run_id AS id, 0 AS part, u.ord AS ord
         FROM threads t CROSS JOIN LATERAL unnest(t.inherited_run_ids) WITH ORDINALITY AS u(run_id, ord)
        WHERE t.id = $1 AND t.tenant_id = $2 AND t.created_by = $3
       UNION ALL
       SELECT id, 1, 0 FROM runs WHERE thread_id = $1)
     SELECT r.id FROM turns x JOIN runs r ON r.id = x.id
      WHERE r.tenant_id = $2 AND r.created_by = $3 AND r.id <> $4
        AND r.finished_at IS NOT NULL AND r.finished_at <= $5::timestamptz
      ORDER BY x.part, x.ord, r.created_at, r.id`,
    [query.threadId, query.tenantId, query.createdBy, query.runId, query.endedBy],
  );
  return rows.map((r) => r.id);
}

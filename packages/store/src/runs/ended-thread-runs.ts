import type { Pool, PoolClient } from "pg";
import type { IsoMicros } from "@steward/contract";

/**
 * The runs of a thread that ended by `endedBy` (the asking run's creation), oldest first by creation: the
 * earlier turns a run in that thread is shown. Only the creator's runs of the tenant (a thread is its
 * creator's); never the asking run, a run still active, or one that ended after the asking run was created.
 */
export async function listEndedThreadRuns(
  db: Pool | PoolClient,
  query: { tenantId: string; createdBy: string; threadId: string; runId: string; endedBy: IsoMicros },
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM runs
      WHERE thread_id = $1 AND tenant_id = $2 AND created_by = $3 AND id <> $4
        AND finished_at IS NOT NULL AND finished_at <= $5::timestamptz
      ORDER BY created_at, id`,
    [query.threadId, query.tenantId, query.createdBy, query.runId, query.endedBy],
  );
  return rows.map((r) => r.id);
}

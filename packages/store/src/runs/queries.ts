import type { Pool } from "pg";
import type { RunSnapshot } from "@steward/contract";

const SNAPSHOT_COLUMNS = `id, state, mode, input, response_language, created_at, started_at, finished_at,
  deadline_at, output, error, usage`;

/** A run of the given tenant and creator, or null: somebody else's run is indistinguishable from none. */
export async function findOwnRun(pool: Pool, owner: { tenantId: string; userId: string }, runId: string): Promise<RunSnapshot | null> {
  const { rows } = await pool.query<RunSnapshot>(`SELECT ${SNAPSHOT_COLUMNS} FROM runs WHERE id = $1 AND tenant_id = $2 AND created_by = $3`, [
    runId,
    owner.tenantId,
    owner.userId,
  ]);
  return rows[0] ?? null;
}

/** One page of the caller's own runs, newest first, plus the total. */
export async function listOwnRuns(
  pool: Pool,
  owner: { tenantId: string; userId: string },
  page: { page: number; pageSize: number },
): Promise<{ items: RunSnapshot[]; total: number }> {
  const [items, total] = await Promise.all([
    pool.query<RunSnapshot>(
      `SELECT ${SNAPSHOT_COLUMNS} FROM runs WHERE tenant_id = $1 AND created_by = $2
        ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`,
      [owner.tenantId, owner.userId, page.pageSize, (page.page - 1) * page.pageSize],
    ),
    pool.query<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE tenant_id = $1 AND created_by = $2", [owner.tenantId, owner.userId]),
  ]);
  return { items: items.rows, total: total.rows[0].n };
}

/** The idempotency record of a create: the run created earlier with this key, and its request's hash. */
export async function findByIdempotencyKey(
  pool: Pool,
  owner: { tenantId: string; userId: string },
  key: string,
): Promise<{ snapshot: RunSnapshot; requestHash: string | null } | null> {
  const { rows } = await pool.query<RunSnapshot & { request_hash: string | null }>(
    `SELECT ${SNAPSHOT_COLUMNS}, request_hash FROM runs
      WHERE tenant_id = $1 AND created_by = $2 AND idempotency_key = $3`,
    [owner.tenantId, owner.userId, key],
  );
  if (!rows[0]) return null;
  const { request_hash, ...snapshot } = rows[0];
  return { snapshot, requestHash: request_hash };
}

import type { Pool, PoolClient } from "pg";
import { threadSnapshotOf, type RunSnapshot, type ThreadSnapshot, type ThreadState } from "@steward/contract";

type Owner = { readonly tenantId: string; readonly userId: string };

const STATE_COLUMNS = `id, created_by, title, status, created_at, updated_at, archived_at, run_count, last_run_id::text, version,
  forked_from_thread_id::text, forked_from_run_id::text, inherited_run_ids::text[]`;

interface ThreadRow {
  id: string;
  created_by: string;
  title: string | null;
  status: "open" | "archived";
  created_at: string;
  updated_at: string;
  archived_at: string | null;
  run_count: number;
  last_run_id: string | null;
  version: number;
  forked_from_thread_id: string | null;
  forked_from_run_id: string | null;
  inherited_run_ids: string[];
}

/** The projection row is the thread's state (it holds every field of the fold), guarded by the stream version. */
const stateOf = (row: ThreadRow): ThreadState => ({
  status: row.status,
  title: row.title,
  created_by: row.created_by,
  created_at: row.created_at,
  updated_at: row.updated_at,
  archived_at: row.archived_at,
  run_count: row.run_count,
  last_run_id: row.last_run_id,
  forked_from: row.forked_from_thread_id && row.forked_from_run_id ? { thread_id: row.forked_from_thread_id, run_id: row.forked_from_run_id } : null,
  inherited_run_ids: row.inherited_run_ids,
  version: row.version,
});

/**
 * A thread of the given tenant and creator, as state, or null: somebody else's thread is indistinguishable
 * from none. `lock` takes its row for the caller's transaction (adding a run, archiving).
 */
export async function findOwnThreadState(db: Pool | PoolClient, owner: Owner, threadId: string, options: { lock?: boolean } = {}): Promise<ThreadState | null> {
  const { rows } = await db.query<ThreadRow>(
    `SELECT ${STATE_COLUMNS} FROM threads WHERE id = $1 AND tenant_id = $2 AND created_by = $3${options.lock ? " FOR UPDATE" : ""}`,
    [threadId, owner.tenantId, owner.userId],
  );
  return rows[0] ? stateOf(rows[0]) : null;
}

/** One page of the caller's threads that are not archived, most recently active first, plus their total. */
export async function listOwnThreads(pool: Pool, owner: Owner, page: { page: number; pageSize: number }): Promise<{ items: ThreadSnapshot[]; total: number }> {
  const [items, total] = await Promise.all([
    pool.query<ThreadRow>(
      `SELECT ${STATE_COLUMNS} FROM threads WHERE tenant_id = $1 AND created_by = $2 AND archived_at IS NULL
        ORDER BY updated_at DESC, id DESC LIMIT $3 OFFSET $4`,
      [owner.tenantId, owner.userId, page.pageSize, (page.page - 1) * page.pageSize],
    ),
    pool.query<{ n: number }>("SELECT count(*)::int AS n FROM threads WHERE tenant_id = $1 AND created_by = $2 AND archived_at IS NULL", [
      owner.tenantId,
      owner.userId,
    ]),
  ]);
  return { items: items.rows.map((r) => threadSnapshotOf(r.id, stateOf(r))), total: total.rows[0].n };
}

const RUN_SNAPSHOT_COLUMNS = `r.id, r.state, r.mode, r.input, r.response_language, r.created_at, r.started_at, r.finished_at,
  r.deadline_at, r.output, r.error, r.usage`;

/**
 * A thread's runs in order: a fork's inherited runs first (as its thread.forked listed them), then the runs added
 * to it (thread.run_added, in stream order). Only the owner's runs: a thread and its runs are its creator's.
 */
const THREAD_RUNS = (columns: string) => `
WITH listed AS (
  SELECT u.run_id, 0 AS part, u.ord AS ord
    FROM threads t CROSS JOIN LATERAL unnest(t.inherited_run_ids) WITH ORDINALITY AS u(run_id, ord)
   WHERE t.id = $1 AND t.tenant_id = $2 AND t.created_by = $3
  UNION ALL
  SELECT (e.data->>'run_id')::uuid, 1, e.version FROM events e WHERE e.stream_id = $1 AND e.type = 'thread.run_added')
SELECT l.part = 0 AS inherited, ${columns} FROM listed l JOIN runs r ON r.id = l.run_id
 WHERE r.tenant_id = $2 AND r.created_by = $3
 ORDER BY l.part, l.ord`;

/** A thread's runs, oldest first: a fork's inherited runs, then those added to it. */
export async function listThreadRuns(db: Pool | PoolClient, owner: Owner, threadId: string): Promise<{ inherited: RunSnapshot[]; own: RunSnapshot[] }> {
  const { rows } = await db.query<RunSnapshot & { inherited: boolean }>(THREAD_RUNS(RUN_SNAPSHOT_COLUMNS), [threadId, owner.tenantId, owner.userId]);
  const runs = { inherited: [] as RunSnapshot[], own: [] as RunSnapshot[] };
  for (const { inherited, ...run } of rows) (inherited ? runs.inherited : runs.own).push(run);
  return runs;
}

/** A thread's runs in the same order, by id and whether each has ended (what a fork is decided on). */
export async function listThreadRunStates(db: Pool | PoolClient, owner: Owner, threadId: string): Promise<Array<{ id: string; ended: boolean }>> {
  const { rows } = await db.query<{ id: string; ended: boolean }>(THREAD_RUNS("r.id::text AS id, r.state IN ('succeeded', 'failed', 'cancelled') AS ended"), [
    threadId,
    owner.tenantId,
    owner.userId,
  ]);
  return rows.map((r) => ({ id: r.id, ended: r.ended }));
}

/** The thread created earlier with this Idempotency-Key, and its request's hash. */
export async function findThreadByIdempotencyKey(
  pool: Pool,
  owner: Owner,
  key: string,
): Promise<{ snapshot: ThreadSnapshot; requestHash: string | null } | null> {
  const { rows } = await pool.query<ThreadRow & { request_hash: string | null }>(
    `SELECT ${STATE_COLUMNS}, request_hash FROM threads WHERE tenant_id = $1 AND created_by = $2 AND idempotency_key = $3`,
    [owner.tenantId, owner.userId, key],
  );
  if (!rows[0]) return null;
  return { snapshot: threadSnapshotOf(rows[0].id, stateOf(rows[0])), requestHash: rows[0].request_hash };
}

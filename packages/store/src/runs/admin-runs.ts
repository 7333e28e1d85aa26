import type { Pool } from "pg";
import type { RunSnapshot, RunStatus } from "@steward/contract";

/** A run as the administrators' view shows it (docs/admin-runs.md): the snapshot, whose it is, and its thread. */
export interface AdminRun extends RunSnapshot {
  readonly created_by: string;
  readonly thread_id: string | null;
}

/** The admins' run list filters; an absent one does not filter. Creation time is the half-open [after, before). */
export interface AdminRunFilter {
  /** The run's creator. */
  readonly user?: string;
  readonly state?: RunStatus;
  /** The run's error code (`error.code`). */
  readonly code?: number;
  /** Created at or after this instant (ISO-8601 UTC, microseconds). */
  readonly createdAfter?: string;
  /** Created before this instant (ISO-8601 UTC, microseconds). */
  readonly createdBefore?: string;
  readonly threadId?: string;
}

const COLUMNS = `id, state, mode, input, response_language, created_at, started_at, finished_at,
  deadline_at, output, error, usage, created_by, thread_id::text`;

/** The WHERE clause of a filter over one tenant's runs, and its parameters ($1 is the tenant). */
function whereOf(tenantId: string, filter: AdminRunFilter): { sql: string; params: unknown[] } {
  const params: unknown[] = [tenantId];
  const terms = ["tenant_id = $1"];
  const add = (term: (p: string) => string, value: unknown) => {
    params.push(value);
    terms.push(term(`$${params.length}`));
  };
  if (filter.user !== undefined) add((p) => `created_by = ${p}`, filter.user);
  if (filter.state !== undefined) add((p) => `state = ${p}`, filter.state);
  // The code is a JSON number; compared as its canonical text.
  if (filter.code !== undefined) add((p) => `error->>'code' = ${p}`, String(filter.code));
  if (filter.createdAfter !== undefined) add((p) => `created_at >= ${p}::timestamptz`, filter.createdAfter);
  if (filter.createdBefore !== undefined) add((p) => `created_at < ${p}::timestamptz`, filter.createdBefore);
  if (filter.threadId !== undefined) add((p) => `thread_id = ${p}::uuid`, filter.threadId);
  return { sql: terms.join(" AND "), params };
}

/** One page of a tenant's runs of every user that pass the filter, newest first, plus their total. */
export async function listTenantRuns(
  pool: Pool,
  tenantId: string,
  filter: AdminRunFilter,
  page: { page: number; pageSize: number },
): Promise<{ items: AdminRun[]; total: number }> {
  const where = whereOf(tenantId, filter);
  const n = where.params.length;
  const [items, total] = await Promise.all([
    pool.query<AdminRun>(`SELECT ${COLUMNS} FROM runs WHERE ${where.sql} ORDER BY created_at DESC, id DESC LIMIT $${n + 1} OFFSET $${n + 2}`, [
      ...where.params,
      page.pageSize,
      (page.page - 1) * page.pageSize,
    ]),
    pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM runs WHERE ${where.sql}`, where.params),
  ]);
  return { items: items.rows, total: total.rows[0].n };
}

/** A run of the tenant, whoever created it, or null: a run of another tenant is indistinguishable from none. */
export async function findTenantRun(pool: Pool, tenantId: string, runId: string): Promise<AdminRun | null> {
  const { rows } = await pool.query<AdminRun>(`SELECT ${COLUMNS} FROM runs WHERE id = $1 AND tenant_id = $2`, [runId, tenantId]);
  return rows[0] ?? null;
}

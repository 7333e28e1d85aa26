import type { Pool } from "pg";
import type { AdminRead } from "./admin-read";

/** Which recorded reads to list; an absent filter does not filter. */
export interface AdminReadFilter {
  /** The administrator who read. */
  readonly user?: string;
  /** A run the answer showed (named by the path or on a list's page). */
  readonly runId?: string;
}

/** One page of a tenant's recorded admin reads, newest first, plus their total. */
export async function listAdminReads(
  pool: Pool,
  tenantId: string,
  filter: AdminReadFilter,
  page: { page: number; pageSize: number },
): Promise<{ items: AdminRead[]; total: number }> {
  const where = `tenant_id = $1 AND ($2::text IS NULL OR user_id = $2) AND ($3::uuid IS NULL OR $3::uuid = ANY (run_ids))`;
  const params = [tenantId, filter.user ?? null, filter.runId ?? null];
  const [items, total] = await Promise.all([
    pool.query<AdminRead>(
      `SELECT id, read_at, user_id, route, run_id::text, query, run_ids::text[], trace_id FROM admin_reads
        WHERE ${where} ORDER BY id DESC LIMIT $4 OFFSET $5`,
      [...params, page.pageSize, (page.page - 1) * page.pageSize],
    ),
    pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM admin_reads WHERE ${where}`, params),
  ]);
  return { items: items.rows, total: total.rows[0].n };
}

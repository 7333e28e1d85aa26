import type { Pool } from "pg";
import type { AdminRead, AdminReadEntry } from "./admin-read";

/** Records one admin read, committed when this resolves; rejects when it could not be written. */
export async function recordAdminRead(pool: Pool, entry: AdminReadEntry): Promise<AdminRead> {
  const { rows } = await pool.query<AdminRead>(
    `INSERT INTO admin_reads (tenant_id, user_id, route, run_id, query, run_ids, trace_id)
     VALUES ($1, $2, $3, $4, $5, $6::uuid[], $7)
     RETURNING id, read_at, user_id, route, run_id::text, query, run_ids::text[], trace_id`,
    [entry.tenantId, entry.userId, entry.route, entry.runId, JSON.stringify(entry.query), entry.runIds, entry.traceId],
  );
  return rows[0];
}

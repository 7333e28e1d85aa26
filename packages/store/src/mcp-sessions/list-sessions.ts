import type { Pool } from "pg";
import { MCP_SESSION_COLUMNS, type McpSessionFilter, type McpSessionRecord } from "./mcp-session";

/** One page of a tenant's recorded MCP sessions that pass the filter, newest first, plus their total. */
export async function listMcpSessions(
  pool: Pool,
  tenantId: string,
  filter: McpSessionFilter,
  page: { page: number; pageSize: number },
): Promise<{ items: McpSessionRecord[]; total: number }> {
  const where = `tenant_id = $1 AND ($2::text IS NULL OR user_id = $2) AND ($3::text IS NULL OR mode = $3)
    AND ($4::boolean IS NULL OR (closed_at IS NULL) = $4)`;
  const params = [tenantId, filter.userId ?? null, filter.mode ?? null, filter.open ?? null];
  const [items, total] = await Promise.all([
    pool.query<McpSessionRecord>(`SELECT ${MCP_SESSION_COLUMNS} FROM mcp_sessions WHERE ${where} ORDER BY opened_at DESC, id DESC LIMIT $5 OFFSET $6`, [
      ...params,
      page.pageSize,
      (page.page - 1) * page.pageSize,
    ]),
    pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM mcp_sessions WHERE ${where}`, params),
  ]);
  return { items: items.rows, total: total.rows[0].n };
}

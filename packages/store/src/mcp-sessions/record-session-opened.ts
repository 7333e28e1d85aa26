import type { Pool } from "pg";
import { MCP_SESSION_COLUMNS, type McpSessionOpening, type McpSessionRecord } from "./mcp-session";

/** Records an MCP session opened, committed when this resolves; rejects when it could not be written (or the id exists). */
export async function recordMcpSessionOpened(pool: Pool, session: McpSessionOpening): Promise<McpSessionRecord> {
  const { rows } = await pool.query<McpSessionRecord>(
    `INSERT INTO mcp_sessions (id, tenant_id, user_id, mode) VALUES ($1, $2, $3, $4) RETURNING ${MCP_SESSION_COLUMNS}`,
    [session.id, session.tenantId, session.userId, session.mode],
  );
  return rows[0];
}

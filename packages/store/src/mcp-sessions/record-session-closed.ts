import type { Pool } from "pg";

/**
 * Records an MCP session of the tenant closed, and why. The first close wins: a later one (the transport closing
 * after the registry closed it) changes nothing. Resolves true when this call closed it.
 */
export async function recordMcpSessionClosed(pool: Pool, session: { readonly id: string; readonly tenantId: string }, reason: string): Promise<boolean> {
  const { rowCount } = await pool.query(
    `UPDATE mcp_sessions SET closed_at = greatest(clock_timestamp(), opened_at), close_reason = $3
      WHERE id = $1 AND tenant_id = $2 AND closed_at IS NULL`,
    [session.id, session.tenantId, reason],
  );
  return rowCount === 1;
}

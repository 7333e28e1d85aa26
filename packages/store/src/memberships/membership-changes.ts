import type { Pool } from "pg";
import type { MembershipChange } from "./membership";

/** A tenant's recorded membership changes after `afterId`, oldest first, optionally of one user. */
export async function listMembershipChanges(
  pool: Pool,
  tenantId: string,
  filter: { userId?: string; afterId?: number; limit: number },
): Promise<MembershipChange[]> {
  const { rows } = await pool.query<MembershipChange>(
    `SELECT id, user_id, change, role, roles, changed_by, reason, changed_at FROM membership_changes
      WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2) AND id > $3
      ORDER BY id LIMIT $4`,
    [tenantId, filter.userId ?? null, filter.afterId ?? 0, filter.limit],
  );
  return rows;
}

import type { Pool } from "pg";
import { MEMBERSHIP_COLUMNS, type Membership, type MembershipActor } from "./membership";

/**
 * Revokes a role from a user of the tenant and records the change, in one statement. The membership stays,
 * with its remaining roles (possibly none), so a token's roles never seed it again. Null when the user does
 * not hold the role in this tenant.
 */
export async function revokeRole(pool: Pool, tenantId: string, userId: string, role: string, by: MembershipActor): Promise<Membership | null> {
  const { rows } = await pool.query<Membership>(
    `WITH revoked AS (
       UPDATE memberships SET roles = array_remove(roles, $3::text), updated_at = clock_timestamp()
        WHERE tenant_id = $1 AND user_id = $2 AND $3::text = ANY (roles)
       RETURNING ${MEMBERSHIP_COLUMNS}
     ), recorded AS (
       INSERT INTO membership_changes (tenant_id, user_id, change, role, roles, changed_by, reason, changed_at)
       SELECT $1, user_id, 'revoked', $3, roles, $4, $5, updated_at FROM revoked
     )
     SELECT ${MEMBERSHIP_COLUMNS} FROM revoked`,
    [tenantId, userId, role, by.userId, by.reason ?? null],
  );
  return rows[0] ?? null;
}

import type { Pool } from "pg";
import { MEMBERSHIP_COLUMNS, type Membership, type MembershipActor } from "./membership";
import { findMember } from "./list-members";

/**
 * Grants a role to a user of the tenant (creating the membership of a user not seen yet) and records the
 * change, in one statement. Granting a role the user holds changes nothing and records nothing.
 */
export async function grantRole(
  pool: Pool,
  tenantId: string,
  userId: string,
  role: string,
  by: MembershipActor,
): Promise<{ membership: Membership; changed: boolean }> {
  const { rows } = await pool.query<Membership & { changed: boolean }>(
    `WITH granted AS (
       INSERT INTO memberships AS m (tenant_id, user_id, roles) VALUES ($1, $2, ARRAY[$3::text])
       ON CONFLICT (tenant_id, user_id) DO UPDATE
         SET roles = ARRAY(SELECT DISTINCT r FROM unnest(array_append(m.roles, $3::text)) AS r ORDER BY r),
             updated_at = clock_timestamp()
         WHERE NOT ($3::text = ANY (m.roles))
       RETURNING ${MEMBERSHIP_COLUMNS}
     ), recorded AS (
       INSERT INTO membership_changes (tenant_id, user_id, change, role, roles, changed_by, reason, changed_at)
       SELECT $1, user_id, 'granted', $3, roles, $4, $5, updated_at FROM granted
     )
     SELECT ${MEMBERSHIP_COLUMNS}, true AS changed FROM granted
     UNION ALL
     SELECT ${MEMBERSHIP_COLUMNS}, false FROM memberships
      WHERE tenant_id = $1 AND user_id = $2 AND NOT EXISTS (SELECT 1 FROM granted)`,
    [tenantId, userId, role, by.userId, by.reason ?? null],
  );
  if (rows[0]) {
    const { changed, ...membership } = rows[0];
    return { membership, changed };
  }
  // The membership was created concurrently, with the role, after this statement's snapshot.
  const membership = await findMember(pool, tenantId, userId);
  if (!membership) throw new Error("a granted membership vanished");
  return { membership, changed: false };
}

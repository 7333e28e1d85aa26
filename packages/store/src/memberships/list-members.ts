import type { Pool } from "pg";
import { MEMBERSHIP_COLUMNS, type Membership } from "./membership";

/** One page of a tenant's members in user order, optionally only those holding `role`, with the total. */
export async function listMembers(
  pool: Pool,
  tenantId: string,
  page: { page: number; pageSize: number; role?: string },
): Promise<{ items: Membership[]; total: number }> {
  const role = page.role ?? null;
  const [items, total] = await Promise.all([
    pool.query<Membership>(
      `SELECT ${MEMBERSHIP_COLUMNS} FROM memberships
        WHERE tenant_id = $1 AND ($2::text IS NULL OR $2::text = ANY (roles))
        ORDER BY user_id LIMIT $3 OFFSET $4`,
      [tenantId, role, page.pageSize, (page.page - 1) * page.pageSize],
    ),
    pool.query<{ n: number }>("SELECT count(*)::int AS n FROM memberships WHERE tenant_id = $1 AND ($2::text IS NULL OR $2::text = ANY (roles))", [
      tenantId,
      role,
    ]),
  ]);
  return { items: items.rows, total: total.rows[0].n };
}

/** A user's membership in the tenant, or null when the user was never seen there nor granted a role. */
export async function findMember(pool: Pool, tenantId: string, userId: string): Promise<Membership | null> {
  const { rows } = await pool.query<Membership>(`SELECT ${MEMBERSHIP_COLUMNS} FROM memberships WHERE tenant_id = $1 AND user_id = $2`, [tenantId, userId]);
  return rows[0] ?? null;
}

import type { Pool } from "@steward/platform";
import type { RoleRule } from "../../domain/decide";

/** The facts a decision needs, read from PostgreSQL at the moment of the decision. */
export interface PolicyFacts {
  currentRoles(tenantId: string, userId: string): Promise<string[]>;
  rulesFor(tenantId: string, roles: readonly string[], action: string): Promise<RoleRule[]>;
}

export function createPgPolicyFacts(pool: Pool): PolicyFacts {
  return {
    async currentRoles(tenantId, userId) {
      const { rows } = await pool.query<{ roles: string[] }>(
        "SELECT roles FROM memberships WHERE tenant_id = $1 AND user_id = $2",
        [tenantId, userId],
      );
      return rows[0]?.roles ?? [];
    },
    async rulesFor(tenantId, roles, action) {
      const { rows } = await pool.query<{ tenant_id: string; role: string; action: string }>(
        `SELECT tenant_id, role, action FROM role_actions
          WHERE tenant_id IN ($1, '*') AND role = ANY($2::text[]) AND action IN ($3, '*')
          ORDER BY tenant_id DESC, role, action`,
        [tenantId, roles, action],
      );
      return rows.map((r) => ({ tenant: r.tenant_id, role: r.role, action: r.action }));
    },
  };
}

import type { Pool } from "@steward/platform";

export interface ElevationRow {
  readonly id: string;
  readonly tenant_id: string;
  readonly user_id: string;
  readonly actions: string[];
  readonly expired: boolean;
  readonly revoked: boolean;
}

/** The facts a decision needs, read from PostgreSQL at the moment of the decision. */
export interface PolicyFacts {
  currentRoles(tenantId: string, userId: string): Promise<string[]>;
  elevation(id: string): Promise<ElevationRow | null>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function createPgPolicyFacts(pool: Pool): PolicyFacts {
  return {
    async currentRoles(tenantId, userId) {
      const { rows } = await pool.query<{ roles: string[] }>(
        "SELECT roles FROM memberships WHERE tenant_id = $1 AND user_id = $2",
        [tenantId, userId],
      );
      return rows[0]?.roles ?? [];
    },
    async elevation(id) {
      if (!UUID.test(id)) return null;
      const { rows } = await pool.query<ElevationRow>(
        `SELECT id, tenant_id, user_id, actions, expires_at <= clock_timestamp() AS expired, revoked_at IS NOT NULL AS revoked
           FROM elevation_sessions WHERE id = $1`,
        [id],
      );
      return rows[0] ?? null;
    },
  };
}

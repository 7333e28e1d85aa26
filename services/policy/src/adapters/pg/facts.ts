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
  /**
   * The user's roles in the tenant now: their membership. `tokenRoles` (from a credential the caller verified)
   * only seed the membership of a user never seen in the tenant; they never widen an existing one.
   */
  currentRoles(tenantId: string, userId: string, tokenRoles: readonly string[] | null): Promise<string[]>;
  elevation(id: string): Promise<ElevationRow | null>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Seeds the membership of a user seen for the first time (recording the seeding as a change) and answers the
 * roles, in one statement. When the row exists, the second branch reads it; a first sight that committed after
 * this statement's snapshot yields no row, and the caller reads again.
 */
const SEED_OR_READ = `
  WITH seeded AS (
    INSERT INTO memberships (tenant_id, user_id, roles)
    VALUES ($1, $2, ARRAY(SELECT DISTINCT r FROM unnest($3::text[]) AS r ORDER BY r))
    ON CONFLICT (tenant_id, user_id) DO NOTHING
    RETURNING roles, updated_at
  ), recorded AS (
    INSERT INTO membership_changes (tenant_id, user_id, change, roles, changed_by, changed_at)
    SELECT $1, $2, 'seeded', roles, $2, updated_at FROM seeded
  )
  SELECT roles FROM seeded
  UNION ALL
  SELECT roles FROM memberships WHERE tenant_id = $1 AND user_id = $2`;

export function createPgPolicyFacts(pool: Pool): PolicyFacts {
  async function membership(tenantId: string, userId: string): Promise<string[]> {
    const { rows } = await pool.query<{ roles: string[] }>("SELECT roles FROM memberships WHERE tenant_id = $1 AND user_id = $2", [tenantId, userId]);
    return rows[0]?.roles ?? [];
  }
  return {
    async currentRoles(tenantId, userId, tokenRoles) {
      if (tokenRoles === null) return membership(tenantId, userId);
      const { rows } = await pool.query<{ roles: string[] }>(SEED_OR_READ, [tenantId, userId, [...tokenRoles]]);
      return rows[0]?.roles ?? membership(tenantId, userId);
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

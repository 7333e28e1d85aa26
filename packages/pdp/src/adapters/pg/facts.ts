import { createBatcher, oneStatementOrEachAlone, preparedStatement, type Pool } from "@steward/platform";

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
 * roles, in one statement; asked only after a read found no membership. When the row exists meanwhile, the
 * second branch reads it; a first sight that committed after this statement's snapshot yields no row, and the
 * caller reads again.
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

/** The memberships of any number of (tenant, user) pairs in one statement: `i` is the pair's 1-based position. */
const READ_MEMBERSHIPS = `
  SELECT k.i::int AS i, m.roles
    FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS k(tenant_id, user_id, i)
    JOIN memberships m ON m.tenant_id = k.tenant_id AND m.user_id = k.user_id`;
/** Once per decision batch: prepared. */
const readMemberships = preparedStatement("steward.read_memberships", READ_MEMBERSHIPS);

interface MemberKey {
  readonly tenantId: string;
  readonly userId: string;
}

export interface PolicyFactsOptions {
  /** Most memberships read by one statement; the rest wait for the next. Default 100. */
  readonly maxBatch?: number;
}

/**
 * Facts over PostgreSQL. A membership is read, not written, at every decision: the reads that arrive while one
 * is in flight share the next statement (never the one in flight, so a decision always sees every change
 * committed before it was asked). Only a user never seen in the tenant costs a write: the seeding.
 */
export function createPgPolicyFacts(pool: Pool, options: PolicyFactsOptions = {}): PolicyFacts {
  const reads = createBatcher<MemberKey, string[] | null>(
    (keys) =>
      oneStatementOrEachAlone(keys, async (some) => {
        // One pair asked by several decisions at once is read once.
        const positions = new Map<string, number>();
        const distinct: MemberKey[] = [];
        const slotOf = some.map((k) => {
          const id = JSON.stringify([k.tenantId, k.userId]);
          let slot = positions.get(id);
          if (slot === undefined) {
            slot = distinct.push(k);
            positions.set(id, slot);
          }
          return slot;
        });
        const { rows } = await pool.query<{ i: number; roles: string[] }>(readMemberships([distinct.map((k) => k.tenantId), distinct.map((k) => k.userId)]));
        const found = new Map(rows.map((r) => [r.i, r.roles]));
        return slotOf.map((slot) => found.get(slot) ?? null);
      }),
    { maxBatch: options.maxBatch },
  );
  async function membership(tenantId: string, userId: string): Promise<string[]> {
    const { rows } = await pool.query<{ roles: string[] }>("SELECT roles FROM memberships WHERE tenant_id = $1 AND user_id = $2", [tenantId, userId]);
    return rows[0]?.roles ?? [];
  }
  return {
    async currentRoles(tenantId, userId, tokenRoles) {
      const known = await reads.submit({ tenantId, userId });
      // A copy: the decisions of one batch that asked for the same member share one row.
      if (known !== null) return [...known];
      if (tokenRoles === null) return [];
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

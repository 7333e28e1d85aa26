import { inTransaction, type Pool } from "@steward/platform";

export interface PolicySetRow {
  readonly tenant_id: string;
  readonly version: number;
  readonly policies: string;
  readonly policy_ids: string[];
  readonly status: "draft" | "active" | "retired";
  readonly created_by: string;
  readonly created_at: string;
  readonly activated_at: string | null;
}

/** Versioned policy sets per tenant. At most one is active. */
export interface PolicySetStore {
  active(tenantId: string): Promise<PolicySetRow | null>;
  get(tenantId: string, version: number): Promise<PolicySetRow | null>;
  /** A page of the tenant's sets, newest first: at most `limit` below version `before` (0: from the newest). */
  list(tenantId: string, page: { before: number; limit: number }): Promise<{ rows: PolicySetRow[]; hasMore: boolean }>;
  /** Installs the default set as active version 1 for a tenant that has none; a no-op otherwise. */
  installDefault(tenantId: string, policies: string, policyIds: readonly string[]): Promise<void>;
  addDraft(tenantId: string, policies: string, policyIds: readonly string[], createdBy: string): Promise<PolicySetRow>;
  activate(tenantId: string, version: number): Promise<PolicySetRow | null>;
}

const COLUMNS = "tenant_id, version, policies, policy_ids, status, created_by, created_at, activated_at";

export function createPgPolicySetStore(pool: Pool): PolicySetStore {
  const get = async (tenantId: string, version: number) =>
    (await pool.query<PolicySetRow>(`SELECT ${COLUMNS} FROM policy_sets WHERE tenant_id = $1 AND version = $2`, [tenantId, version])).rows[0] ?? null;
  return {
    get,
    async active(tenantId) {
      const { rows } = await pool.query<PolicySetRow>(`SELECT ${COLUMNS} FROM policy_sets WHERE tenant_id = $1 AND status = 'active'`, [tenantId]);
      return rows[0] ?? null;
    },
    async list(tenantId, page) {
      const { rows } = await pool.query<PolicySetRow>(
        `SELECT ${COLUMNS} FROM policy_sets WHERE tenant_id = $1 AND ($2::int = 0 OR version < $2) ORDER BY version DESC LIMIT $3`,
        [tenantId, page.before, page.limit + 1],
      );
      return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
    },
    async installDefault(tenantId, policies, policyIds) {
      await pool.query(
        `INSERT INTO policy_sets (tenant_id, version, policies, policy_ids, status, created_by, activated_at)
         SELECT $1, 1, $2, $3, 'active', 'steward-default', clock_timestamp()
          WHERE NOT EXISTS (SELECT 1 FROM policy_sets WHERE tenant_id = $1)
         ON CONFLICT DO NOTHING`,
        [tenantId, policies, policyIds],
      );
    },
    async addDraft(tenantId, policies, policyIds, createdBy) {
      return inTransaction(pool, async (client) => {
        await client.query("SELECT pg_advisory_xact_lock(hashtextextended('policy_sets/' || $1, 0))", [tenantId]);
        const { rows } = await client.query<PolicySetRow>(
          `INSERT INTO policy_sets (tenant_id, version, policies, policy_ids, status, created_by)
           SELECT $1, coalesce(max(version), 0) + 1, $2, $3, 'draft', $4 FROM policy_sets WHERE tenant_id = $1
           RETURNING ${COLUMNS}`,
          [tenantId, policies, policyIds, createdBy],
        );
        return rows[0];
      });
    },
    async activate(tenantId, version) {
      return inTransaction(pool, async (client) => {
        const target = await client.query("SELECT 1 FROM policy_sets WHERE tenant_id = $1 AND version = $2 FOR UPDATE", [tenantId, version]);
        if (target.rowCount === 0) return null;
        await client.query("UPDATE policy_sets SET status = 'retired' WHERE tenant_id = $1 AND status = 'active' AND version <> $2", [tenantId, version]);
        const { rows } = await client.query<PolicySetRow>(
          `UPDATE policy_sets SET status = 'active', activated_at = clock_timestamp()
            WHERE tenant_id = $1 AND version = $2 RETURNING ${COLUMNS}`,
          [tenantId, version],
        );
        return rows[0];
      });
    },
  };
}

import type { Pool } from "pg";
import type { DatasetTenants } from "./dataset-tenants";

/**
 * Whether a grant admits a member: a grant with no roles admits every member; one with roles admits a member
 * holding one of them now (memberships are read at the call, never taken from the run's start).
 */
const ADMITS = `(cardinality(g.roles) = 0 OR g.roles && coalesce(m.roles, '{}'::text[]))`;

/**
 * The datasets the user may focus in the tenant right now, by name: granted by the tenant and listed for it by the
 * operator (`listed`); a grant of a dataset the operator does not list for the tenant admits nobody.
 */
export async function datasetsFor(pool: Pool, listed: DatasetTenants, tenantId: string, userId: string): Promise<string[]> {
  const { rows } = await pool.query<{ dataset: string }>(
    `SELECT g.dataset FROM tenant_datasets g
       LEFT JOIN memberships m ON m.tenant_id = g.tenant_id AND m.user_id = $2
      WHERE g.tenant_id = $1 AND ${ADMITS}
      ORDER BY g.dataset`,
    [tenantId, userId],
  );
  return rows.map((r) => r.dataset).filter((dataset) => listed.allows(dataset, tenantId));
}

/** Sets the run's focus to `dataset` (the latest focus wins); the caller has checked the grant. */
export async function focusDataset(pool: Pool, focus: { runId: string; tenantId: string; dataset: string; stepNo: number }): Promise<void> {
  await pool.query(
    `INSERT INTO run_datasets (run_id, tenant_id, dataset, step_no) VALUES ($1, $2, $3, $4)
     ON CONFLICT (run_id) DO UPDATE SET dataset = EXCLUDED.dataset, step_no = EXCLUDED.step_no, focused_at = clock_timestamp()
      WHERE run_datasets.tenant_id = EXCLUDED.tenant_id`,
    [focus.runId, focus.tenantId, focus.dataset, focus.stepNo],
  );
}

/**
 * The dataset the run has in focus, and whether the user may still use it (the grant may have been revoked or
 * narrowed to roles the user no longer holds since it was focused, or the operator no longer lists the dataset for
 * the tenant: `listed`). Null when the run focused none in this tenant.
 */
export async function focusedDataset(
  pool: Pool,
  listed: DatasetTenants,
  runId: string,
  tenantId: string,
  userId: string,
): Promise<{ dataset: string; allowed: boolean } | null> {
  const { rows } = await pool.query<{ dataset: string; allowed: boolean }>(
    `SELECT f.dataset, (g.dataset IS NOT NULL AND ${ADMITS}) AS allowed
       FROM run_datasets f
       LEFT JOIN tenant_datasets g ON g.tenant_id = f.tenant_id AND g.dataset = f.dataset
       LEFT JOIN memberships m ON m.tenant_id = f.tenant_id AND m.user_id = $3
      WHERE f.run_id = $1 AND f.tenant_id = $2`,
    [runId, tenantId, userId],
  );
  const focus = rows[0];
  return focus ? { dataset: focus.dataset, allowed: focus.allowed && listed.allows(focus.dataset, tenantId) } : null;
}

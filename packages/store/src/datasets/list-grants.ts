import type { Pool } from "pg";
import { GRANT_COLUMNS, type DatasetGrant, type DatasetGrantChange } from "./dataset-grant";

/** The tenant's dataset grants, by name. */
export async function listDatasetGrants(pool: Pool, tenantId: string): Promise<DatasetGrant[]> {
  const { rows } = await pool.query<DatasetGrant>(`SELECT ${GRANT_COLUMNS} FROM tenant_datasets WHERE tenant_id = $1 ORDER BY dataset`, [tenantId]);
  return rows;
}

/** The tenant's recorded grant changes after `afterId`, oldest first, optionally of one dataset. */
export async function listDatasetGrantChanges(
  pool: Pool,
  tenantId: string,
  filter: { dataset?: string; afterId?: number; limit: number },
): Promise<DatasetGrantChange[]> {
  const { rows } = await pool.query<DatasetGrantChange & { id: string }>(
    `SELECT id, dataset, change, roles, changed_by, reason, changed_at FROM tenant_dataset_changes
      WHERE tenant_id = $1 AND ($2::text IS NULL OR dataset = $2) AND id > $3
      ORDER BY id LIMIT $4`,
    [tenantId, filter.dataset ?? null, filter.afterId ?? 0, filter.limit],
  );
  // bigserial arrives as text; ids stay far below 2^53.
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}

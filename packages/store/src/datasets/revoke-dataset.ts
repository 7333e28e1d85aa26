import type { Pool } from "pg";
import { GRANT_COLUMNS, type DatasetGrant, type DatasetGrantActor } from "./dataset-grant";

/**
 * Revokes the tenant's grant of a dataset and records the change, in one statement. A run that has it in focus
 * is refused at its next data call. Null when the tenant holds no such grant.
 */
export async function revokeDataset(pool: Pool, tenantId: string, dataset: string, by: DatasetGrantActor): Promise<DatasetGrant | null> {
  const { rows } = await pool.query<DatasetGrant>(
    `WITH revoked AS (
       DELETE FROM tenant_datasets WHERE tenant_id = $1 AND dataset = $2
       RETURNING ${GRANT_COLUMNS}
     ), recorded AS (
       INSERT INTO tenant_dataset_changes (tenant_id, dataset, change, roles, changed_by, reason)
       SELECT $1, dataset, 'revoked', roles, $3, $4 FROM revoked
     )
     SELECT ${GRANT_COLUMNS} FROM revoked`,
    [tenantId, dataset, by.userId, by.reason ?? null],
  );
  return rows[0] ?? null;
}

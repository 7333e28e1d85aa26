import type { Pool } from "pg";
import { GRANT_COLUMNS, type DatasetGrant, type DatasetGrantActor } from "./dataset-grant";

/**
 * Grants the tenant a named dataset, to every member (`roles` empty) or to the members holding one of `roles`,
 * and records the change, in one statement. Granting it again with other roles replaces them; granting it
 * with the roles it has changes nothing and records nothing (`changed` false).
 */
export async function grantDataset(
  pool: Pool,
  tenantId: string,
  dataset: string,
  roles: readonly string[],
  by: DatasetGrantActor,
): Promise<{ grant: DatasetGrant; changed: boolean }> {
  const sorted = [...new Set(roles)].sort();
  const { rows } = await pool.query<DatasetGrant & { changed: boolean }>(
    `WITH granted AS (
       INSERT INTO tenant_datasets AS g (tenant_id, dataset, roles, granted_by, reason) VALUES ($1, $2, $3::text[], $4, $5)
       ON CONFLICT (tenant_id, dataset) DO UPDATE
         SET roles = EXCLUDED.roles, granted_by = EXCLUDED.granted_by, reason = EXCLUDED.reason, granted_at = clock_timestamp()
         WHERE g.roles IS DISTINCT FROM EXCLUDED.roles
       RETURNING ${GRANT_COLUMNS}
     ), recorded AS (
       INSERT INTO tenant_dataset_changes (tenant_id, dataset, change, roles, changed_by, reason, changed_at)
       SELECT $1, dataset, 'granted', roles, granted_by, reason, granted_at FROM granted
     )
     SELECT ${GRANT_COLUMNS}, true AS changed FROM granted
     UNION ALL
     SELECT ${GRANT_COLUMNS}, false FROM tenant_datasets
      WHERE tenant_id = $1 AND dataset = $2 AND NOT EXISTS (SELECT 1 FROM granted)`,
    [tenantId, dataset, sorted, by.userId, by.reason ?? null],
  );
  if (!rows[0]) throw new Error("a dataset grant vanished while it was made");
  const { changed, ...grant } = rows[0];
  return { grant, changed };
}

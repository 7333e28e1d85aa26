import type { Pool } from "@steward/platform";
import { grantDataset, listDatasetGrantChanges, listDatasetGrants, revokeDataset } from "@steward/store";
import type { DatasetGrantStore } from "../../app/ports";

/** A tenant's dataset grants and their change log in PostgreSQL. */
export function createPgDatasetGrantStore(pool: Pool): DatasetGrantStore {
  return {
    list: (tenantId) => listDatasetGrants(pool, tenantId),
    grant: (tenantId, dataset, roles, by) => grantDataset(pool, tenantId, dataset, roles, by),
    revoke: (tenantId, dataset, by) => revokeDataset(pool, tenantId, dataset, by),
    changes: (tenantId, filter) => listDatasetGrantChanges(pool, tenantId, filter),
  };
}

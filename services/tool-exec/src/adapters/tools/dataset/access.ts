import type { Pool } from "@steward/platform";
import { datasetsFor, focusDataset, focusedDataset, type DatasetTenants } from "@steward/store";

/** Which datasets a run's user may use, and which one the run has in focus (PostgreSQL implements it). */
export interface DatasetAccess {
  /** The datasets the tenant grants the user right now (all members, or a role the user holds now). */
  granted(tenantId: string, userId: string): Promise<string[]>;
  /** Makes `dataset` the run's focus; the latest focus of a run wins. */
  focus(focus: { runId: string; tenantId: string; dataset: string; stepNo: number }): Promise<void>;
  /** The run's focus in this tenant and whether the user may still use it; null when the run focused none. */
  focused(runId: string, tenantId: string, userId: string): Promise<{ dataset: string; allowed: boolean } | null>;
}

/**
 * Grants and focus read from the application's database (tenant_datasets, run_datasets, memberships), admitting
 * only datasets the operator lists for the tenant (`listed`, DATASET_TENANTS), at every call.
 */
export function createPgDatasetAccess(pool: Pool, listed: DatasetTenants): DatasetAccess {
  return {
    granted: (tenantId, userId) => datasetsFor(pool, listed, tenantId, userId),
    focus: (focus) => focusDataset(pool, focus),
    focused: (runId, tenantId, userId) => focusedDataset(pool, listed, runId, tenantId, userId),
  };
}

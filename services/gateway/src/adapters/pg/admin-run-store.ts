import type { Pool } from "@steward/platform";
import { findTenantRun, listAdminReads, listTenantRuns, readStream, recordAdminRead } from "@steward/store";
import type { AdminRunStore } from "../../app/ports";

/** A tenant's runs and the audit log of the administrators' reads (`admin_reads`). */
export function createPgAdminRunStore(pool: Pool): AdminRunStore {
  return {
    list: (tenantId, filter, page) => listTenantRuns(pool, tenantId, filter, page),
    find: (tenantId, runId) => findTenantRun(pool, tenantId, runId),
    events: (runId, page) => readStream(pool, runId, page),
    recordRead: (entry) => recordAdminRead(pool, entry),
    reads: (tenantId, filter, page) => listAdminReads(pool, tenantId, filter, page),
  };
}

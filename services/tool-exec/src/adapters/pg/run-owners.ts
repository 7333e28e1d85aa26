import { preparedStatement, type Pool } from "@steward/platform";
import type { RunOwners } from "../../app/run-owner";

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Once per run a tool-exec serves: prepared. */
const ownedRun = preparedStatement("steward.owned_run", "SELECT 1 FROM runs WHERE id = $1 AND tenant_id = $2 AND created_by = $3");

/** Run ownership read from the runs projection (one primary-key lookup per call). */
export function createPgRunOwners(pool: Pool): RunOwners {
  return {
    async owns(runId, tenantId, userId) {
      if (!uuid.test(runId)) return false;
      const { rowCount } = await pool.query(ownedRun([runId, tenantId, userId]));
      return rowCount === 1;
    },
  };
}

import type { Pool } from "pg";
import { preparedStatement } from "@steward/platform";
import { DEFERRED_PROBE, deferredRunWaits } from "./admission";
import { releaseLease } from "./lease";

/** Once per drive of a run that did not end: its lease let go and its tenant's deferred runs probed together. */
const releaseAndProbe = preparedStatement(
  "steward.release_and_probe",
  `WITH released AS (UPDATE runs SET lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2)
${DEFERRED_PROBE("$3")}`,
);

export interface EndDriveInput {
  readonly runId: string;
  /** The runner whose drive it was. */
  readonly owner: string;
  /** The run ended in this drive: the append that ended it let its lease go already (the projection's rule). */
  readonly ended: boolean;
  /** With a tenant's admission: the run's tenant, whose deferred runs a freed place may take. */
  readonly tenantId?: string;
}

/**
 * A runner's drive of a run is over (ended, waiting for a person, handed back): the run's lease is let go so that
 * another runner may take it at once, and, with admission, the answer says whether a deferred run of its tenant
 * waits for the place (`admitDeferred` with `probed`). In one statement at most: none for an ended run without
 * admission, the probe alone for an ended run.
 */
export async function endDrive(pool: Pool, input: EndDriveInput): Promise<{ deferredWaiting: boolean }> {
  if (input.ended) return { deferredWaiting: input.tenantId !== undefined && (await deferredRunWaits(pool, input.tenantId)) };
  if (input.tenantId === undefined) {
    await releaseLease(pool, input.runId, input.owner);
    return { deferredWaiting: false };
  }
  const { rowCount } = await pool.query(releaseAndProbe([input.runId, input.owner, input.tenantId]));
  return { deferredWaiting: (rowCount ?? 0) > 0 };
}

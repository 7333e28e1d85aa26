import type { Pool } from "pg";
import { createBatcher, oneStatementOrEachAlone, type Batcher } from "@steward/platform";
import { admitRuns, type Admission, type AdmissionAsk } from "./admission";

/** Admissions of runs, one at a time as the caller sees them. */
export interface Admissions {
  admit(input: AdmissionAsk & { readonly runId: string }): Promise<Admission>;
}

/** Most runs one admission statement decides; the rest go in the next. */
const RUNS_PER_ADMISSION = 64;

/**
 * Admissions asked for while one of the same tenant is in flight are decided together by the next statement
 * (`admitRuns`: the tenant's lock taken once, one commit), in the order they were asked for. A tenant's admissions
 * wait for each other on its lock anyway: one at a time, each run of a burst waited for every commit before its own.
 * A quiet tenant's admission waits for no timer. Tenants, runners' leases and limits are never mixed in a statement.
 */
export function batchedAdmissions(pool: Pool): Admissions {
  /** Per tenant (with the owner, lease and limit asked for), while admissions are waiting or in flight. */
  const open = new Map<string, { batcher: Batcher<string, Admission>; asked: number }>();
  return {
    async admit(input) {
      const key = `${input.tenantId}\u0000${input.owner}\u0000${input.leaseMs}\u0000${input.maxRunning}`;
      let entry = open.get(key);
      if (!entry) {
        const ask: AdmissionAsk = { tenantId: input.tenantId, owner: input.owner, leaseMs: input.leaseMs, maxRunning: input.maxRunning };
        const batcher = createBatcher<string, Admission>((runIds) => oneStatementOrEachAlone(runIds, (some) => admitRuns(pool, ask, some)), {
          maxBatch: RUNS_PER_ADMISSION,
        });
        open.set(key, (entry = { batcher, asked: 0 }));
      }
      entry.asked++;
      try {
        return await entry.batcher.submit(input.runId);
      } finally {
        if (--entry.asked === 0 && open.get(key) === entry) open.delete(key);
      }
    },
  };
}

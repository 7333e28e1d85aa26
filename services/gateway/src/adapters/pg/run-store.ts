import type { Pool } from "@steward/platform";
import { findOwnRun, listOwnRuns, readStream } from "@steward/store";
import type { RunStore } from "../../app/ports";

/** The caller's own runs, from the runs projection and the event store. */
export function createPgRunStore(pool: Pool): RunStore {
  return {
    list: (owner, page) => listOwnRuns(pool, owner, page),
    find: (owner, runId) => findOwnRun(pool, owner, runId),
    events: (runId, page) => readStream(pool, runId, page),
  };
}

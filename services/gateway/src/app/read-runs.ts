import { terminalStatuses, type RunSnapshot, type StoredRunEvent } from "@steward/contract";
import { NotFoundError } from "@steward/platform";
import type { Principal } from "../domain/principal";
import type { RunStore } from "./ports";

/** One stored event as clients see it, in a JSON page and in a stream's `data:`. */
export interface RunEventItem {
  readonly seq: number;
  readonly type: string;
  readonly data: unknown;
  readonly recorded_at: string;
}

export const eventItemOf = (e: StoredRunEvent): RunEventItem => ({ seq: e.metadata.seq, type: e.type, data: e.data, recorded_at: e.metadata.recorded_at });

/** A caller's reads of their own runs: somebody else's run is indistinguishable from none (404). */
export interface RunReads {
  list(caller: Principal, page: { page: number; pageSize: number }): Promise<{ items: RunSnapshot[]; total: number }>;
  /** The caller's run, or 404. */
  get(caller: Principal, runId: string): Promise<RunSnapshot>;
  /** Whether the caller's run is terminal (its events are all stored by then). */
  finished(caller: Principal, runId: string): Promise<boolean>;
  /** A run's stored events after a sequence number, in order; the caller's ownership is the route's to check first. */
  events(runId: string, page: { after: number; limit: number }): Promise<StoredRunEvent[]>;
}

export function createRunReads(deps: { runs: RunStore }): RunReads {
  const ownerOf = (caller: Principal) => ({ tenantId: caller.tenantId, userId: caller.userId });
  return {
    list: (caller, page) => deps.runs.list(ownerOf(caller), page),
    async get(caller, runId) {
      const run = await deps.runs.find(ownerOf(caller), runId);
      if (!run) throw new NotFoundError();
      return run;
    },
    async finished(caller, runId) {
      return terminalStatuses.includes((await deps.runs.find(ownerOf(caller), runId))?.state ?? "queued");
    },
    events: (runId, page) => deps.runs.events(runId, page),
  };
}

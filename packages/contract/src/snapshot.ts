import type { RunError, RunMode, RunOutput, RunStatus, Usage } from "./events";
import type { RunState } from "./run/fold";
import type { IsoMicros } from "./time";

/** What a client reads for a run (SPEC §2). */
export interface RunSnapshot {
  readonly id: string;
  readonly state: RunStatus;
  readonly mode: RunMode;
  readonly input: string;
  readonly response_language: string | null;
  readonly created_at: IsoMicros;
  readonly started_at: IsoMicros | null;
  readonly finished_at: IsoMicros | null;
  readonly deadline_at: IsoMicros;
  readonly output: RunOutput | null;
  readonly error: RunError | null;
  readonly usage: Usage;
}

/** The snapshot of a folded run. */
export function snapshotOf(id: string, state: RunState): RunSnapshot {
  if (state.status === "new" || !state.created_at || !state.deadline_at) {
    throw new RangeError(`run ${id} has no run.queued event`);
  }
  return {
    id,
    state: state.status,
    mode: state.mode,
    input: state.input,
    response_language: state.response_language,
    created_at: state.created_at,
    started_at: state.started_at,
    finished_at: state.finished_at,
    deadline_at: state.deadline_at,
    output: state.output,
    error: state.error,
    usage: state.usage,
  };
}

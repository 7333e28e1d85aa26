import { foldRun, type RunState, type StoredRunEvent } from "@steward/contract";

/** The run's stored events cannot be folded (corrupt, out of order): every delivery would fail alike. */
export class UnfoldableRunError extends Error {
  constructor(
    readonly runId: string,
    options?: { cause?: unknown },
  ) {
    super("the run's recorded events cannot be folded", options);
    this.name = "UnfoldableRunError";
  }
}

/** Folds a stored stream, naming a fold failure as the run's own (UnfoldableRunError) rather than the loop's. */
export function foldStored(runId: string, events: readonly StoredRunEvent[]): RunState {
  try {
    return foldRun(events);
  } catch (err) {
    throw new UnfoldableRunError(runId, { cause: err });
  }
}

import { RunErrorCode } from "../codes";
import type { RunCancelled, RunError, RunFailed } from "../events";
import type { IsoMicros } from "../time";

/** The run failed with `error` at `at`. */
export function runFailed(error: RunError, at: IsoMicros): RunFailed {
  return { type: "run.failed", data: { error, finished_at: at } };
}

/** The run was cancelled at `at` (60405), by its runner or, when no runner holds it, by the cancel itself. */
export function runCancelled(at: IsoMicros): RunCancelled {
  return { type: "run.cancelled", data: { error: { code: RunErrorCode.cancelled, message: "the run was cancelled" }, finished_at: at } };
}

/** The failure of a run whose stored events cannot be folded: every delivery would fail alike, so it ends. */
export const unfoldableError: RunError = { code: RunErrorCode.outputUnparseable, message: "the run's recorded events cannot be read" };

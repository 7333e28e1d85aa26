import { RunErrorCode, isTerminal, parseMicros, type RunError, type RunState } from "@steward/contract";

/**
 * The run's deadline rule, one for the loop and the reaper: at or past `deadline_at` an unfinished run fails
 * with 60402 at the step it reached. Pure: the clock is an argument (µs since the epoch).
 */
export function deadlineFailure(state: RunState, nowMicros: bigint): RunError | null {
  if (isTerminal(state) || !state.deadline_at || nowMicros < parseMicros(state.deadline_at)) return null;
  return { code: RunErrorCode.deadlinePassed, message: "the run's deadline passed", step_no: state.step_no };
}

/** A question or a confirmation nobody answered within `waitMicros` fails the run with 60406. */
export function unansweredFailure(state: RunState, nowMicros: bigint, waitMicros: bigint): RunError | null {
  if (isTerminal(state) || !state.awaiting || nowMicros - parseMicros(state.awaiting.since) < waitMicros) return null;
  return { code: RunErrorCode.questionUnanswered, message: "nobody answered in time", step_no: state.step_no };
}

/**
 * What the reaper may end a run with: while the run waits for the user only the wait's own bound applies (the
 * deadline is extended when the answer arrives); otherwise the deadline.
 */
export function overdueFailure(state: RunState, nowMicros: bigint, askWaitMicros: bigint): RunError | null {
  return state.awaiting ? unansweredFailure(state, nowMicros, askWaitMicros) : deadlineFailure(state, nowMicros);
}

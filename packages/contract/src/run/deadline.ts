import { RunErrorCode } from "../codes";
import type { RunError } from "../events";
import { formatMicros, parseMicros, type IsoMicros } from "../time";
import { isTerminal, type RunState } from "./fold";

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

/** The deadline of a run that waited for the user, moved on by the time it waited (none when the clock is behind). */
export function shiftedDeadline(state: RunState, nowMicros: bigint): IsoMicros {
  const waited = state.awaiting ? nowMicros - parseMicros(state.awaiting.since) : 0n;
  return formatMicros(parseMicros(state.deadline_at!) + (waited > 0n ? waited : 0n));
}

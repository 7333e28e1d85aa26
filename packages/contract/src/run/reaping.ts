import type { RunError } from "../events";
import { formatMicros } from "../time";
import type { RunDecision } from "./decision";
import { deadlineFailure, unansweredFailure } from "./deadline";
import { runFailed, unfoldableError } from "./endings";
import { isTerminal, type RunState } from "./fold";

const failing = (error: RunError | null, now: bigint): RunDecision => ({
  events: error ? [runFailed(error, formatMicros(now))] : [],
  commands: [],
  effect: { kind: "append" },
});

/**
 * A run past its deadline fails with 60402 — unless it waits for the user: then only the wait's own bound
 * applies (`unanswered`), because the deadline moves on when the answer arrives.
 */
export function decideExpire(state: RunState, now: bigint): RunDecision {
  return failing(state.awaiting ? null : deadlineFailure(state, now), now);
}

/** A question or a confirmation unanswered for `waitMicros` fails the run with 60406. */
export function decideUnanswered(state: RunState, now: bigint, waitMicros: bigint): RunDecision {
  return failing(unansweredFailure(state, now, waitMicros), now);
}

/** A run whose stored events cannot be folded fails with 60302 (its state is then the runs projection's). */
export function decideUnfoldable(state: RunState, now: bigint): RunDecision {
  return failing(isTerminal(state) ? null : unfoldableError, now);
}

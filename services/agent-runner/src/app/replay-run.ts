import {
  RunErrorCode,
  canonicalJson,
  evolve,
  foldRun,
  initialRunState,
  isTerminal,
  parseMicros,
  type RunState,
  type StoredRunEvent,
} from "@steward/contract";
import { nextStep, type NextStep } from "../domain/next-step";
import { recordedCatalog } from "./replay-catalog";
import { describe, expectedEvents, sameDecision } from "./replay-expectations";

export interface Divergence {
  /** The recorded event where the replay parted (one past the last event when the recording ends early). */
  readonly seq: number;
  readonly expected: string;
  readonly actual: string;
}

export interface ReplayReport {
  readonly runId: string;
  readonly recordedEvents: number;
  /** Recorded events the replay reproduced before it ended or diverged. */
  readonly replayedEvents: number;
  /** Whether the recorded run is terminal; an unfinished run is not a divergence. */
  readonly finished: boolean;
  /** The run is finished, nothing diverged, and status, output, error, usage and step_no agree. */
  readonly sameFinalState: boolean;
  readonly recordedState: RunState;
  readonly replayedState: RunState;
  readonly divergence?: Divergence;
}

/**
 * The decision the loop made before appending `recorded[at]`. It was taken between the previous event and
 * this one; the decider only reads the clock for the deadline, so the time of this event is used (a recorded
 * 60402 reproduces), and the previous event's time when that would fail a run the recording continues.
 */
function decide(state: RunState, recorded: readonly StoredRunEvent[], at: number, registered: ReadonlySet<string>): NextStep {
  const next = recorded[at];
  const late = nextStep(state, parseMicros(next.metadata.recorded_at), registered);
  const deadlineRecorded = next.type === "run.failed" && next.data.error.code === RunErrorCode.deadlinePassed;
  if (late.kind === "fail" && late.error.code === RunErrorCode.deadlinePassed && !deadlineRecorded) {
    return nextStep(state, parseMicros(recorded[at - 1].metadata.recorded_at), registered);
  }
  return late;
}

/**
 * An event the loop did not decide, which may fall between any two events, even inside a step: the user's
 * answer, decision or cancel request (the gateway), and the reaper's failures — 60402 once the deadline
 * has passed, 60406 while the run waits for the user (its wait is configurable, so not checked here).
 */
function fromOutside(event: StoredRunEvent, state: RunState): boolean {
  if (event.type === "run.cancel_requested" || event.type === "input.received" || event.type === "confirmation.decided") return true;
  if (event.type !== "run.failed") return false;
  if (event.data.error.code === RunErrorCode.questionUnanswered) return state.awaiting !== null;
  if (event.data.error.code !== RunErrorCode.deadlinePassed || !state.deadline_at || state.awaiting) return false;
  return parseMicros(event.metadata.recorded_at) >= parseMicros(state.deadline_at);
}

const finalFacts = (s: RunState) => canonicalJson({ status: s.status, output: s.output, error: s.error, usage: s.usage, step_no: s.step_no });

/**
 * Re-drives a recorded run with the runner's own decider, no model and no tools: from run.queued alone, each
 * decision is checked against the recording, with the model's answers and the tools' results taken from it.
 */
export function replayRun(events: readonly StoredRunEvent[]): ReplayReport {
  const recordedState = foldRun(events);
  const finished = isTerminal(recordedState);
  const catalog = recordedCatalog(events);
  const registered = new Set(catalog.keys());
  const endSeq = (events[events.length - 1]?.metadata.seq ?? 0) + 1;
  let state = initialRunState;
  let at = 0;
  let divergence: Divergence | undefined;

  if (events[0]?.type !== "run.queued") {
    divergence = { seq: events[0]?.metadata.seq ?? 1, expected: "run.queued", actual: describe(events[0]) };
  } else {
    state = evolve(state, events[0]);
    at = 1;
  }
  while (!divergence && !isTerminal(state) && at < events.length) {
    const step = decide(state, events, at, registered);
    for (const want of expectedEvents(step, state, events, at, catalog)) {
      const got = events[at];
      if (!got && !finished) break;
      if (got && fromOutside(got, state)) {
        state = evolve(state, got);
        at++;
        break;
      }
      if (!got || typeof want === "string" || !sameDecision(want, got)) {
        divergence = { seq: got?.metadata.seq ?? endSeq, expected: describe(want), actual: describe(got) };
        break;
      }
      state = evolve(state, got);
      at++;
    }
    if (at >= events.length) break;
  }
  if (!divergence && isTerminal(state) && at < events.length) {
    divergence = { seq: events[at].metadata.seq, expected: "the end of the stream", actual: describe(events[at]) };
  }
  return {
    runId: events[0]?.metadata.run_id ?? "",
    recordedEvents: events.length,
    replayedEvents: at,
    finished,
    sameFinalState: finished && !divergence && finalFacts(state) === finalFacts(recordedState),
    recordedState,
    replayedState: state,
    divergence,
  };
}

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
 * Tools the run could call: every tool named in the recording, except one a recorded 60200 failure names —
 * it was unknown when the run called it, and must stay unknown for the replay to decide the same.
 */
function registeredTools(events: readonly StoredRunEvent[]): Set<string> {
  const names = new Set<string>();
  for (const e of events) {
    if (e.type === "thought") for (const c of e.data.tool_calls) names.add(c.tool_name);
    if (e.type === "tool_call" || e.type === "tool_result") names.add(e.data.tool_name);
  }
  for (const e of events) {
    if (e.type === "run.failed" && e.data.error.code === RunErrorCode.unknownTool && e.data.error.tool_name) names.delete(e.data.error.tool_name);
  }
  return names;
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
 * An end the loop did not decide and that may fall between any two events, even inside a step: a
 * cancellation, or the reaper's 60402 once the deadline has passed.
 */
function endedFromOutside(event: StoredRunEvent, state: RunState): boolean {
  if (event.type === "run.cancelled") return true;
  if (event.type !== "run.failed" || event.data.error.code !== RunErrorCode.deadlinePassed || !state.deadline_at) return false;
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
  const registered = registeredTools(events);
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
    for (const want of expectedEvents(step, state, events, at)) {
      const got = events[at];
      if (!got && !finished) break;
      if (got && endedFromOutside(got, state)) {
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

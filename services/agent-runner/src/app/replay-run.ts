import {
  RunErrorCode,
  canonicalJson,
  decide,
  evolve,
  foldRun,
  initialRunState,
  isTerminal,
  parseMicros,
  type RunEvent,
  type RunState,
  type StoredRunEvent,
} from "@steward/contract";
import { decideInLoop, type DecideContext, type Decision, type Observation } from "../domain/decider";
import type { ToolCatalog } from "../domain/tool-catalog";
import { recordedCatalog } from "./replay-catalog";
import { describe, sameDecision } from "./replay-compare";
import { byAnotherWriter, commandOf } from "./replay-commands";
import { decisionNotRecorded, observedHistory, observedModel, observedTool } from "./replay-observations";

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
 * The decision the loop made before appending `recorded[at]`, by the loop's own decider. It was taken between
 * the previous event and this one; the decider reads the clock only for the deadline, so the time of this
 * event is used (a recorded 60402 reproduces), and the previous event's time when that would fail a run the
 * recording continues.
 */
function decideAt(state: RunState, observation: Observation, recorded: readonly StoredRunEvent[], at: number, ctx: Omit<DecideContext, "now">): Decision {
  const late = decideInLoop(state, observation, { ...ctx, now: parseMicros(recorded[at].metadata.recorded_at) });
  const next = recorded[at];
  const deadlineRecorded = next.type === "run.failed" && next.data.error.code === RunErrorCode.deadlinePassed;
  const deadlineDecided = (d: Decision) =>
    d.events.some((e) => e.type === "run.failed" && e.data.error.code === RunErrorCode.deadlinePassed) ||
    (observation.kind === "model_unavailable" && d.events.length === 0 && d.effect.kind === "decide_again");
  if (!deadlineRecorded && deadlineDecided(late) && at > 0) {
    return decideInLoop(state, observation, { ...ctx, now: parseMicros(recorded[at - 1].metadata.recorded_at) });
  }
  return late;
}

const finalFacts = (s: RunState) => canonicalJson({ status: s.status, output: s.output, error: s.error, usage: s.usage, step_no: s.step_no });

/**
 * Re-drives a recorded run with the run's decider, no model and no tools: every recorded event is checked
 * against a decision. What the loop observed — the model's answers, tool-exec's results, the window's
 * compaction — is read from the recording and fed back to the decider as the live loop feeds it; an event of
 * another writer (the gateway, the reaper) is read as that writer's command (`commandOf`), decided, and must
 * be what the decider gives, in the loop's pauses between two of its commits.
 */
export function replayRun(events: readonly StoredRunEvent[]): ReplayReport {
  const recordedState = foldRun(events);
  const finished = isTerminal(recordedState);
  const catalog: ToolCatalog = recordedCatalog(events);
  const ctx = { catalog, runnerId: "" };
  const endSeq = (events[events.length - 1]?.metadata.seq ?? 0) + 1;
  let state = initialRunState;
  let at = 0;
  let divergence: Divergence | undefined;
  const diverge = (want: RunEvent | string) => {
    divergence = { seq: events[at]?.metadata.seq ?? endSeq, expected: describe(want), actual: describe(events[at]) };
  };

  if (events[0]?.type !== "run.queued") {
    divergence = { seq: events[0]?.metadata.seq ?? 1, expected: "run.queued", actual: describe(events[0]) };
  }
  let observation: Observation = { kind: "nothing" };
  replay: while (!divergence && !isTerminal(state) && at < events.length) {
    const written = commandOf(events[at], state);
    if (written) {
      // Between two commits of the loop; the loop, reloading, decides on what it had observed.
      const decided = decide(written.command, state, { now: written.now });
      if (decided.effect.kind === "refused" || decided.events.length === 0) {
        const why = decided.effect.kind === "refused" ? decided.effect.reason : "nothing to append";
        diverge(`the ${written.command.kind} command's events (the decider: ${why})`);
        break;
      }
      for (const want of decided.events) {
        const got = events[at];
        if (!got) {
          if (finished) diverge(want);
          break replay;
        }
        if (!sameDecision(want, got)) {
          diverge(want);
          break replay;
        }
        state = evolve(state, got);
        at++;
      }
      continue;
    }
    const decision = decideAt(state, observation, events, at, ctx);
    for (const want of decision.events) {
      const got = events[at];
      if (!got) {
        if (finished) diverge(want);
        break replay;
      }
      if (decisionNotRecorded(want, got)) continue;
      if (!sameDecision(want, got)) {
        diverge(want);
        break replay;
      }
      state = evolve(state, got);
      at++;
    }
    const fed = observation;
    observation = { kind: "nothing" };
    const effect = decision.effect;
    if (at >= events.length) break;
    switch (effect.kind) {
      case "finished":
      case "decide_again":
      case "retry_later":
        break;
      case "wait_for_user":
        // Only the user, a cancel or the reaper moves a waiting run on.
        if (!byAnotherWriter(events[at], state)) diverge(`the user's ${state.awaiting?.kind ?? "answer"} (the run waits)`);
        break;
      case "call_model": {
        const seen = observedModel(events, at, state, effect.stepNo);
        if (seen) observation = seen;
        else if (!byAnotherWriter(events[at], state)) diverge(`the model's answer for step ${effect.stepNo} (thought, message or run.failed 60300-60302)`);
        break;
      }
      case "load_history": {
        const seen = observedHistory(events, at, state);
        if (seen) observation = seen;
        else if (!byAnotherWriter(events[at], state)) diverge("the thread's history (context.history)");
        break;
      }
      case "invoke_tool":
        observation = observedTool(events, at, state, effect.call) ?? { kind: "nothing" };
        // A call sent again with nothing recorded of it: the recording stops making sense here.
        if (observation.kind === "nothing" && !byAnotherWriter(events[at], state)) {
          const decided = events[at];
          if (decided.type === "tool.decided" && decided.data.call_id === effect.call.call_id) {
            // The PDP's decision is recorded; the result that must follow it is not.
            state = evolve(state, events[at++]);
            diverge(`tool_result of call ${effect.call.call_id}`);
          } else if (fed.kind === "nothing" && decision.events.length === 0) {
            diverge(`tool_result of call ${effect.call.call_id}`);
          }
        }
        break;
      default: {
        const unreachable: never = effect;
        throw new TypeError(`unknown effect ${JSON.stringify(unreachable)}`);
      }
    }
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

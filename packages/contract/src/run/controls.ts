import type { RunEvent } from "../events";
import { formatMicros } from "../time";
import type { AnswerQuestion, DecideConfirmation, RunRef } from "./commands";
import type { RunDecision } from "./decision";
import { runCancelled } from "./endings";
import { isTerminal, type RunState } from "./fold";
import { shiftedDeadline } from "./deadline";
import { requestRun } from "./run-request";

const refused = (reason: string): RunDecision => ({ events: [], commands: [], effect: { kind: "refused", reason } });

/** The event, and the run handed back to a runner: the request is keyed by the version the append makes. */
function handedBack(run: RunRef, state: RunState, event: RunEvent): RunDecision {
  const request = requestRun(
    { ...run, createdBy: state.created_by, elevationSessionId: state.elevation_session_id },
    { kind: "handed_back", version: state.version + 1 },
  );
  return { events: [event], commands: [request], effect: { kind: "append" } };
}

/** The user's answer to the question the run waits on; the deadline moves on by the time it waited. */
export function decideAnswer(command: AnswerQuestion, state: RunState, now: bigint): RunDecision {
  if (state.status !== "awaiting_input" || !state.awaiting) return refused("the run is not waiting for an answer");
  const at = formatMicros(now);
  const data = { call_id: state.awaiting.call_id, answer: command.answer, deadline_at: shiftedDeadline(state, now), answered_at: at };
  return handedBack(command.run, state, { type: "input.received", data });
}

/**
 * The user's decision on the call the run waits to run, bound to that call's fingerprint. A decision made on
 * another call (`expected`) is refused: the run now waits for a call the person did not see.
 */
export function decideConfirmation(command: DecideConfirmation, state: RunState, now: bigint): RunDecision {
  if (state.status !== "awaiting_confirmation" || !state.awaiting) return refused("the run is not waiting for a confirmation");
  const { call_id, fingerprint } = state.awaiting;
  if (command.expected !== undefined && command.expected !== fingerprint) return refused("the run is waiting for the confirmation of another call");
  const at = formatMicros(now);
  const data = {
    call_id,
    decision: command.decision,
    deadline_at: shiftedDeadline(state, now),
    decided_at: at,
    ...(fingerprint ? { fingerprint } : {}),
    ...(command.channel ? { channel: command.channel } : {}),
  };
  return handedBack(command.run, state, { type: "confirmation.decided", data });
}

/**
 * The creator's cancel: requested, and at once cancelled unless a runner drives the run (nobody holds a queued
 * or waiting run; a running one is stopped by its runner within one step, which then appends `run.cancelled`).
 */
export function decideCancel(state: RunState, now: bigint): RunDecision {
  if (isTerminal(state)) return refused(`the run has already ${state.status}`);
  const at = formatMicros(now);
  const events: RunEvent[] = [{ type: "run.cancel_requested", data: { requested_at: at } }];
  if (state.status !== "running") events.push(runCancelled(at));
  return { events, commands: [], effect: { kind: "append" } };
}

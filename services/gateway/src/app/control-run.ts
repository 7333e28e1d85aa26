import {
  type ApprovalChannel,
  busNames,
  decide,
  nowMicros,
  parseMicros,
  runRequestedMessage,
  type RunCommand,
  type RunDecision,
  type RunSnapshot,
  type RunState,
  snapshotOf,
} from "@steward/contract";
import { ConcurrencyError, ConflictError, NotFoundError } from "@steward/platform";
import type { Principal } from "../domain/principal";
import type { RunWriter } from "./ports";

/** How often a cancel is tried against a run its runner keeps appending to. */
const CANCEL_ATTEMPTS = 3;

/**
 * The creator's controls over a run: answer a question, decide a confirmation, cancel. Each is an append
 * with the run's expected version, so an answer or a confirmation that races the runner is refused (409) rather
 * than lost or applied to what the person did not see. A cancel means the same whatever the runner just did: it
 * reads the run again and retries (a few times) instead, refused only once the run has ended.
 *
 * An answer or a decision hands the run back to a runner with a command; how it reaches the bus is `runs`' business.
 */
export function createRunControls(deps: { runs: RunWriter; namespace: string }) {
  const names = busNames(deps.namespace);

  async function load(principal: Principal, runId: string): Promise<RunState> {
    const state = await deps.runs.load({ tenantId: principal.tenantId, userId: principal.userId }, runId);
    if (!state) throw new NotFoundError();
    return state;
  }

  /** The run's decision on `command`, now: refused (409) when the run is not in a state that takes it. */
  function decided(command: RunCommand, state: RunState): RunDecision {
    const decision = decide(command, state, { now: parseMicros(nowMicros()) });
    if (decision.effect.kind === "refused") throw new ConflictError(decision.effect.reason);
    return decision;
  }

  async function append(principal: Principal, runId: string, state: RunState, decision: RunDecision, traceparent: string): Promise<RunSnapshot> {
    const commands = decision.commands.map((request) => runRequestedMessage(names, request, traceparent));
    try {
      const appended = await deps.runs.append(state, { runId, tenantId: principal.tenantId, events: decision.events, commands, traceparent });
      return snapshotOf(runId, appended);
    } catch (err) {
      if (err instanceof ConcurrencyError) throw new ConflictError("the run changed meanwhile; read it and try again", { cause: err });
      throw err;
    }
  }

  return {
    async answer(principal: Principal, runId: string, answer: string, traceparent: string): Promise<RunSnapshot> {
      const state = await load(principal, runId);
      const run = { id: runId, tenantId: principal.tenantId };
      return append(principal, runId, state, decided({ kind: "answer", run, answer }, state), traceparent);
    },
    /**
     * Decides the confirmation the run waits for, bound to that call's fingerprint, and records the channel it
     * came through. A client that names the fingerprint it showed (`expected`) is refused (409) when the run now
     * waits for another call.
     */
    async confirm(
      principal: Principal,
      runId: string,
      decision: "approve" | "reject",
      traceparent: string,
      channel: ApprovalChannel,
      expected?: string,
    ): Promise<RunSnapshot> {
      const state = await load(principal, runId);
      const run = { id: runId, tenantId: principal.tenantId };
      return append(principal, runId, state, decided({ kind: "confirm", run, decision, channel, expected }, state), traceparent);
    },
    async cancel(principal: Principal, runId: string, traceparent: string): Promise<RunSnapshot> {
      for (let attempt = 1; ; attempt++) {
        const state = await load(principal, runId);
        // A running run is stopped by its runner within one step; nobody holds a queued or waiting run.
        const decision = decided({ kind: "cancel" }, state);
        try {
          return await append(principal, runId, state, decision, traceparent);
        } catch (err) {
          const raced = err instanceof ConflictError && err.cause instanceof ConcurrencyError;
          if (!raced || attempt >= CANCEL_ATTEMPTS) throw err;
        }
      }
    },
  };
}

export type RunControls = ReturnType<typeof createRunControls>;

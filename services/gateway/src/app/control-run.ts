import {
  type ApprovalChannel,
  busNames,
  decide,
  foldRun,
  nowMicros,
  parseMicros,
  runRequestedMessage,
  type RunCommand,
  type RunDecision,
  type RunSnapshot,
  type RunState,
  snapshotOf,
} from "@steward/contract";
import { ConcurrencyError, ConflictError, NotFoundError, type Pool } from "@steward/platform";
import { appendRunEvents, findOwnRun, readStream, type DirectPublisher } from "@steward/store";
import type { Principal } from "../domain/principal";
import { ownPublishing } from "./own-publishing";

/** How often a cancel is tried against a run its runner keeps appending to. */
const CANCEL_ATTEMPTS = 3;

/**
 * The creator's controls over a run: answer a question, decide a confirmation, cancel. Each is an append
 * with the run's expected version, so an answer or a confirmation that races the runner is refused (409) rather
 * than lost or applied to what the person did not see. A cancel means the same whatever the runner just did: it
 * reads the run again and retries (a few times) instead, refused only once the run has ended.
 *
 * With a `publisher` (once the bus is connected) the gateway publishes an answer or a decision itself, as when
 * it creates a run: the copy, then the command that hands the run back to a runner, vouching for the copy. When
 * an earlier row of the run is still on its way from another writer, the append leaves them to the relays.
 */
export function createRunControls(deps: { pool: Pool; namespace: string; publisher?: () => DirectPublisher | undefined }) {
  const names = busNames(deps.namespace);

  async function load(principal: Principal, runId: string): Promise<RunState> {
    const own = await findOwnRun(deps.pool, { tenantId: principal.tenantId, userId: principal.userId }, runId);
    if (!own) throw new NotFoundError();
    return foldRun(await readStream(deps.pool, runId));
  }

  /** The run's decision on `command`, now: refused (409) when the run is not in a state that takes it. */
  function decided(command: RunCommand, state: RunState): RunDecision {
    const decision = decide(command, state, { now: parseMicros(nowMicros()) });
    if (decision.effect.kind === "refused") throw new ConflictError(decision.effect.reason);
    return decision;
  }

  async function append(principal: Principal, runId: string, state: RunState, decision: RunDecision, traceparent: string): Promise<RunSnapshot> {
    const commands = decision.commands.map((request) => runRequestedMessage(names, request, traceparent));
    // Only a control that hands the run back publishes itself. A cancel goes by the relays: the runner it stops
    // appends within milliseconds, while a held cancel row would still be unmarked, and its rows would wait behind
    // it for a relay's next wake-up.
    const publishing = ownPublishing(commands.length > 0 ? deps.publisher?.() : undefined, runId);
    try {
      const appended = await appendRunEvents(deps.pool, {
        runId,
        tenantId: principal.tenantId,
        state,
        events: [...decision.events],
        commands,
        namespace: deps.namespace,
        traceparent,
        ...publishing.fields,
      });
      return snapshotOf(runId, publishing.handOff(appended).state);
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

import {
  type ApprovalChannel,
  busNames,
  foldRun,
  formatMicros,
  isTerminal,
  nowMicros,
  parseMicros,
  RunErrorCode,
  type RunEvent,
  type RunRequested,
  type RunSnapshot,
  type RunState,
  snapshotOf,
} from "@steward/contract";
import { ConcurrencyError, ConflictError, NotFoundError, type Pool } from "@steward/platform";
import { appendRunEvents, findOwnRun, readStream, type DirectPublisher, type OutboxMessage } from "@steward/store";
import type { Principal } from "../adapters/http/auth";
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

  async function append(principal: Principal, runId: string, state: RunState, events: RunEvent[], requeue: boolean, traceparent: string): Promise<RunSnapshot> {
    const commands: OutboxMessage[] = [];
    if (requeue) {
      const command: RunRequested = { run_id: runId, tenant_id: principal.tenantId, created_by: state.created_by };
      if (state.elevation_session_id) command.elevation_session_id = state.elevation_session_id;
      commands.push({
        subject: names.runRequested,
        msgId: `run.requested.${runId}.${state.version + events.length}`,
        payload: command,
        headers: { "Steward-Run-Id": runId, traceparent },
      });
    }
    // Only a control that hands the run back publishes itself. A cancel goes by the relays: the runner it stops
    // appends within milliseconds, while a held cancel row would still be unmarked, and its rows would wait behind
    // it for a relay's next wake-up.
    const publishing = ownPublishing(requeue ? deps.publisher?.() : undefined, runId);
    try {
      const appended = await appendRunEvents(deps.pool, { runId, tenantId: principal.tenantId, state, events, commands, namespace: deps.namespace, traceparent, ...publishing.fields });
      return snapshotOf(runId, publishing.handOff(appended).state);
    } catch (err) {
      if (err instanceof ConcurrencyError) throw new ConflictError("the run changed meanwhile; read it and try again", { cause: err });
      throw err;
    }
  }

  /** The deadline moved on by the time the run waited for the user. */
  function shiftedDeadline(state: RunState, now: string): string {
    const waited = parseMicros(now) - parseMicros(state.awaiting!.since);
    return formatMicros(parseMicros(state.deadline_at!) + (waited > 0n ? waited : 0n));
  }

  return {
    async answer(principal: Principal, runId: string, answer: string, traceparent: string): Promise<RunSnapshot> {
      const state = await load(principal, runId);
      if (state.status !== "awaiting_input" || !state.awaiting) throw new ConflictError("the run is not waiting for an answer");
      const now = nowMicros();
      const event: RunEvent = { type: "input.received", data: { call_id: state.awaiting.call_id, answer, deadline_at: shiftedDeadline(state, now), answered_at: now } };
      return append(principal, runId, state, [event], true, traceparent);
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
      if (state.status !== "awaiting_confirmation" || !state.awaiting) throw new ConflictError("the run is not waiting for a confirmation");
      const { call_id, fingerprint } = state.awaiting;
      if (expected !== undefined && expected !== fingerprint) throw new ConflictError("the run is waiting for the confirmation of another call");
      const now = nowMicros();
      const event: RunEvent = {
        type: "confirmation.decided",
        data: { call_id, decision, deadline_at: shiftedDeadline(state, now), decided_at: now, ...(fingerprint ? { fingerprint } : {}), channel },
      };
      return append(principal, runId, state, [event], true, traceparent);
    },
    async cancel(principal: Principal, runId: string, traceparent: string): Promise<RunSnapshot> {
      for (let attempt = 1; ; attempt++) {
        const state = await load(principal, runId);
        if (isTerminal(state)) throw new ConflictError(`the run has already ${state.status}`);
        const now = nowMicros();
        const events: RunEvent[] = [{ type: "run.cancel_requested", data: { requested_at: now } }];
        // A running run is stopped by its runner within one step; nobody holds a queued or waiting run.
        if (state.status !== "running") {
          events.push({ type: "run.cancelled", data: { error: { code: RunErrorCode.cancelled, message: "the run was cancelled" }, finished_at: now } });
        }
        try {
          return await append(principal, runId, state, events, false, traceparent);
        } catch (err) {
          const raced = err instanceof ConflictError && err.cause instanceof ConcurrencyError;
          if (!raced || attempt >= CANCEL_ATTEMPTS) throw err;
        }
      }
    },
  };
}

export type RunControls = ReturnType<typeof createRunControls>;

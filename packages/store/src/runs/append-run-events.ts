import type { Pool } from "pg";
import { busNames, foldRun, type RunEvent, type RunState, type StoredRunEvent } from "@steward/contract";
import { inTransaction } from "@steward/platform";
import { appendToStream } from "../event-store/append-to-stream";
import { enqueueOutbox, type OutboxMessage } from "../outbox/enqueue";
import { projectRun } from "./project-run";

export interface AppendRunEventsInput {
  readonly runId: string;
  readonly tenantId: string;
  /** The run as folded so far; its `version` is the expected stream version. */
  readonly state: RunState;
  readonly events: readonly RunEvent[];
  /** Commands to publish with the events, in the same transaction. */
  readonly commands?: readonly OutboxMessage[];
  readonly namespace: string;
  readonly traceparent?: string;
  readonly idempotencyKey?: string | null;
  readonly requestHash?: string | null;
}

export interface AppendRunEventsResult {
  readonly events: StoredRunEvent[];
  readonly state: RunState;
}

/** The bus copy of a stored event: subject names the run and the type; headers make it inspectable. */
export function eventMessage(namespace: string, event: StoredRunEvent): OutboxMessage {
  const names = busNames(namespace);
  const headers: Record<string, string> = {
    "Steward-Run-Id": event.metadata.run_id,
    "Steward-Event-Type": event.type,
    "Steward-Seq": String(event.metadata.seq),
  };
  if (event.metadata.traceparent) headers.traceparent = event.metadata.traceparent;
  return {
    subject: names.runEvent(event.metadata.run_id, event.type),
    msgId: event.metadata.event_id,
    payload: event,
    headers,
  };
}

/**
 * The one write path of a run: in one transaction, append the events (optimistic concurrency on the
 * state's version), put their bus copies and any commands in the outbox, and update the runs projection.
 */
export async function appendRunEvents(pool: Pool, input: AppendRunEventsInput): Promise<AppendRunEventsResult> {
  const state = foldRun(input.events, input.state);
  const stored = await inTransaction(pool, async (client) => {
    const events = await appendToStream(client, {
      streamId: input.runId,
      tenantId: input.tenantId,
      expectedVersion: input.state.version,
      events: input.events,
      traceparent: input.traceparent,
    });
    await enqueueOutbox(client, [...events.map((e) => eventMessage(input.namespace, e)), ...(input.commands ?? [])]);
    await projectRun(
      client,
      { id: input.runId, tenantId: input.tenantId, idempotencyKey: input.idempotencyKey, requestHash: input.requestHash },
      state,
    );
    return events;
  });
  return { events: stored, state };
}

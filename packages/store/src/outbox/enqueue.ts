import type { PoolClient } from "pg";

/** A message to publish once the transaction that wrote it commits. */
export interface OutboxMessage {
  readonly subject: string;
  /** Becomes `Nats-Msg-Id`, so JetStream drops a second publish of the same row. */
  readonly msgId: string;
  readonly payload: unknown;
  readonly headers: Readonly<Record<string, string>>;
  /** The run it belongs to: a relay publishes a run's rows in their order (see 019_outbox_direct.sql). */
  readonly runId?: string;
}

/**
 * Writes outbox rows inside the caller's transaction; the insert trigger wakes the relays. A run's row is
 * published after the run's events written before it (`after_version`: the run's version now).
 */
export async function enqueueOutbox(client: PoolClient, messages: readonly OutboxMessage[]): Promise<void> {
  if (messages.length === 0) return;
  await client.query(
    `INSERT INTO outbox (subject, msg_id, payload, headers, run_id, after_version)
     SELECT m.*, (SELECT r.version FROM runs r WHERE r.id = m.run_id)
       FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[], $5::uuid[]) AS m(subject, msg_id, payload, headers, run_id)`,
    [
      messages.map((m) => m.subject),
      messages.map((m) => m.msgId),
      messages.map((m) => JSON.stringify(m.payload)),
      messages.map((m) => JSON.stringify(m.headers)),
      messages.map((m) => m.runId ?? null),
    ],
  );
}

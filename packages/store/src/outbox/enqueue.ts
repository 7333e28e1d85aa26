import type { PoolClient } from "pg";

/** A message to publish once the transaction that wrote it commits. */
export interface OutboxMessage {
  readonly subject: string;
  /** Becomes `Nats-Msg-Id`, so JetStream drops a second publish of the same row. */
  readonly msgId: string;
  readonly payload: unknown;
  readonly headers: Readonly<Record<string, string>>;
}

/** Writes outbox rows inside the caller's transaction; the insert trigger wakes the relays. */
export async function enqueueOutbox(client: PoolClient, messages: readonly OutboxMessage[]): Promise<void> {
  if (messages.length === 0) return;
  await client.query(
    `INSERT INTO outbox (subject, msg_id, payload, headers)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[])`,
    [
      messages.map((m) => m.subject),
      messages.map((m) => m.msgId),
      messages.map((m) => JSON.stringify(m.payload)),
      messages.map((m) => JSON.stringify(m.headers)),
    ],
  );
}

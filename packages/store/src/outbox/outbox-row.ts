import type { JetStreamClient, PubAck } from "@nats-io/jetstream";
import { headers as natsHeaders } from "@nats-io/transport-node";

/** One outbox row as it goes onto the bus. */
export interface OutboxRow {
  readonly id: string;
  readonly subject: string;
  /** Becomes `Nats-Msg-Id`: JetStream drops a row published a second time within its duplicate window. */
  readonly msg_id: string;
  readonly payload: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** Publishes one row with its headers and message id; resolves with JetStream's acknowledgement. */
export function publishRow(js: JetStreamClient, row: OutboxRow): Promise<PubAck> {
  const h = natsHeaders();
  for (const [k, v] of Object.entries(row.headers)) h.set(k, v);
  return js.publish(row.subject, row.payload, { msgID: row.msg_id, headers: h });
}

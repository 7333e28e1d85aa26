import type { PubAck } from "@nats-io/jetstream";
import type { StreamPublisher } from "@steward/platform";

/** One message as it goes onto the bus: an outbox row, or the copy of a run's event. */
export interface OutboxRow {
  /** The outbox row's id, or a copy's event id. */
  readonly id: string;
  readonly subject: string;
  /** Becomes `Nats-Msg-Id`: JetStream drops a row published a second time within its duplicate window. */
  readonly msg_id: string;
  readonly payload: string;
  readonly headers: Readonly<Record<string, string>>;
  /** A copy of the run's event at this version, built from the events table (no outbox row). */
  readonly version?: number;
}

/** Publishes one row with its headers and message id; resolves with JetStream's acknowledgement. */
export function publishRow(bus: StreamPublisher, row: OutboxRow): Promise<PubAck> {
  return bus.publish({ subject: row.subject, payload: row.payload, msgId: row.msg_id, headers: row.headers });
}

import type { JetStreamClient, PubAck } from "@nats-io/jetstream";
import { headers as natsHeaders } from "@nats-io/transport-node";

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

/**
 * Publishes one row with its headers and message id; resolves with JetStream's acknowledgement. The headers are
 * appended to an empty set: `set` would first look each name up to delete it, twice the work and the garbage
 * for every message (docs/performance.md, "Session 29").
 */
export function publishRow(js: JetStreamClient, row: OutboxRow): Promise<PubAck> {
  const h = natsHeaders();
  for (const [k, v] of Object.entries(row.headers)) h.append(k, v);
  return js.publish(row.subject, row.payload, { msgID: row.msg_id, headers: h });
}

import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@steward/platform";

export interface BusMessage {
  subject: string;
  seq: number;
  headers: Record<string, string>;
  json: any;
}

/** Reads every message stored on `subject` in `stream` (through a short-lived consumer), in stream order. */
export async function readSubject(nc: NatsConnection, stream: string, subject: string, max = 1000): Promise<BusMessage[]> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.consumers.add(stream, {
    filter_subject: subject,
    ack_policy: AckPolicy.None,
    deliver_policy: DeliverPolicy.All,
    inactive_threshold: 30_000_000_000,
    // A reader of its own: one replica in memory, whatever the stream's replicas.
    num_replicas: 1,
    mem_storage: true,
  });
  try {
    const pending = info.num_pending;
    const out: BusMessage[] = [];
    if (pending === 0) return out;
    const consumer = await jetstream(nc).consumers.get(stream, info.name);
    const wanted = Math.min(pending, max);
    // A fetch may end with part of the batch (on a replicated stream, right after a leader change): fetch
    // again for the rest, within a bound.
    const deadline = Date.now() + 20_000;
    while (out.length < wanted && Date.now() < deadline) {
      const batch = await consumer.fetch({ max_messages: wanted - out.length, expires: 5000 });
      for await (const m of batch) {
        const headers: Record<string, string> = {};
        for (const [k] of m.headers ?? []) headers[k] = m.headers!.get(k);
        out.push({ subject: m.subject, seq: m.seq, headers, json: m.json() });
        if (out.length >= wanted) break;
      }
    }
    return out;
  } finally {
    await jsm.consumers.delete(stream, info.name).catch(() => undefined);
  }
}

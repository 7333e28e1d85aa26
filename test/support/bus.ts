import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@steward/platform";

export interface BusMessage {
  subject: string;
  seq: number;
  headers: Record<string, string>;
  json: any;
}

/** How many messages the stream holds on `subject`, as its leader counts them. */
async function storedOn(jsm: JetStreamManager, stream: string, subject: string): Promise<number> {
  const info = await jsm.streams.info(stream, { subjects_filter: subject });
  return Object.values(info.state.subjects ?? {}).reduce((sum, n) => sum + n, 0);
}

/**
 * Reads every message stored on `subject` in `stream`, in stream order, through short-lived consumers of its
 * own (one replica, in memory). The count to reach is the stream leader's; a consumer placed on a replica
 * that is still catching up (a node just back from a kill) sees fewer, so the reader goes on from the last
 * sequence it got, with a new consumer when one stops delivering, until it has them all or `boundMs` passed.
 * What is still missing then is missing from the stream.
 */
export async function readSubject(nc: NatsConnection, stream: string, subject: string, max = 1000, boundMs = 20_000): Promise<BusMessage[]> {
  const jsm = await jetstreamManager(nc);
  const wanted = Math.min(max, await storedOn(jsm, stream, subject));
  const out: BusMessage[] = [];
  const deadline = Date.now() + boundMs;
  while (out.length < wanted && Date.now() < deadline) {
    const from = out.at(-1)?.seq;
    const info = await jsm.consumers.add(stream, {
      filter_subject: subject,
      ack_policy: AckPolicy.None,
      ...(from === undefined ? { deliver_policy: DeliverPolicy.All } : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: from + 1 }),
      inactive_threshold: 30_000_000_000,
      num_replicas: 1,
      mem_storage: true,
    });
    try {
      const consumer = await jetstream(nc).consumers.get(stream, info.name);
      // A fetch may end with part of the batch (right after a leader change): fetch again while it delivers.
      for (let got = -1; got !== 0 && out.length < wanted && Date.now() < deadline; ) {
        got = 0;
        const batch = await consumer.fetch({ max_messages: wanted - out.length, expires: 2000 });
        for await (const m of batch) {
          const headers: Record<string, string> = {};
          for (const [k] of m.headers ?? []) headers[k] = m.headers!.get(k);
          out.push({ subject: m.subject, seq: m.seq, headers, json: m.json() });
          got += 1;
          if (out.length >= wanted) break;
        }
      }
    } finally {
      await jsm.consumers.delete(stream, info.name).catch(() => undefined);
    }
  }
  return out;
}

import { jetstreamManager, type MsgRequest, type StoredMsg } from "@nats-io/jetstream";
import type { NatsConnection } from "@steward/platform";
import { waitFor } from "./wait-for";

export interface BusMessage {
  subject: string;
  seq: number;
  headers: Record<string, string>;
  json: any;
}

/**
 * Reads every message stored on `subject` in `stream`, in stream order, as the stream's leader holds them: one
 * `STREAM.MSG.GET` with `next_by_subj` per message (nats-server 2.9 has it), each from the sequence after the one
 * before. The leader answers from what is committed, so a replica still catching up (a node just back from a
 * kill) cannot show a partial or shifted copy; a request that fails or goes unanswered while the stream elects a
 * leader is asked again until `boundMs` passed, and then the read fails: it never returns a part as the whole.
 */
export async function readSubject(nc: NatsConnection, stream: string, subject: string, max = 1000, boundMs = 20_000): Promise<BusMessage[]> {
  const jsm = await jetstreamManager(nc);
  const deadline = Date.now() + boundMs;
  const out: BusMessage[] = [];
  while (out.length < max) {
    // The leader's STREAM.MSG.GET takes next_by_subj; the client's type for it (MsgRequest) does not name it.
    const query = { seq: (out.at(-1)?.seq ?? 0) + 1, next_by_subj: subject } as unknown as MsgRequest;
    // null (nothing more on the subject) is an answer; only a failure is asked again.
    const m = await waitFor(() => jsm.streams.getMessage(stream, query), {
      timeoutMs: Math.max(0, deadline - Date.now()),
      intervalMs: 250,
      what: `the leader of ${stream} to answer for ${subject}`,
    });
    if (m === null) break;
    out.push(busMessage(m));
  }
  return out;
}

function busMessage(m: StoredMsg): BusMessage {
  const headers: Record<string, string> = {};
  for (const [k] of m.header ?? []) headers[k] = m.header.get(k);
  return { subject: m.subject, seq: m.seq, headers, json: m.json() };
}

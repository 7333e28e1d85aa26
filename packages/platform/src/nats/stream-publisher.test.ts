import { randomBytes } from "node:crypto";
import { JetStreamApiError, jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { natsUrl } from "../../../../test/support/databases";
import { waitFor } from "../../../../test/support/wait-for";
import { connectNats } from "./connect";
import { createStreamPublisher, NoStreamError, PublisherClosedError, PublishTimeoutError, streamPublisherOf } from "./stream-publisher";

jest.setTimeout(30_000);

/** Publishes to a real JetStream stream of its own: acknowledgements, duplicates, refusals, timeouts, a closed connection. */
describe("a stream publisher (real NATS with JetStream)", () => {
  const tag = randomBytes(4).toString("hex");
  const stream = `SP_${tag}`;
  const subject = (s: string) => `sp${tag}.${s}`;
  let nc: NatsConnection;
  let jsm: JetStreamManager;

  beforeAll(async () => {
    nc = await connect({ servers: new URL(natsUrl).host });
    jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: stream, subjects: [subject("ok.>")], duplicate_window: 60_000_000_000 });
    await jsm.streams.add({ name: `${stream}_SMALL`, subjects: [subject("small.>")], max_msg_size: 64 });
  });

  afterAll(async () => {
    await jsm?.streams.delete(stream).catch(() => undefined);
    await jsm?.streams.delete(`${stream}_SMALL`).catch(() => undefined);
    await nc?.close();
  });

  it("given a stream on the subject, then each publish resolves with its stream and sequence, in the order sent, and the message carries its headers and id", async () => {
    const bus = createStreamPublisher(nc);
    const acks = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        bus.publish({ subject: subject("ok.a"), payload: JSON.stringify({ i }), msgId: `a-${i}`, headers: { "Steward-Run-Id": "r1", traceparent: "tp" } }),
      ),
    );
    expect(acks.every((a) => a.stream === stream && a.duplicate === false)).toBe(true);
    const seqs = acks.map((a) => a.seq);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(new Set(seqs).size).toBe(200);
    const stored = await jsm.streams.getMessage(stream, { seq: acks[7].seq });
    expect(stored?.json()).toEqual({ i: 7 });
    expect(stored?.header.get("Nats-Msg-Id")).toBe("a-7");
    expect(stored?.header.get("Steward-Run-Id")).toBe("r1");
    expect(stored?.header.get("traceparent")).toBe("tp");
    expect(bus.waiting).toBe(0);
  });

  it("given the same message id twice, then the second is acknowledged as a duplicate and the stream keeps one", async () => {
    const bus = createStreamPublisher(nc);
    const message = { subject: subject("ok.dup"), payload: "{}", msgId: `dup-${tag}`, headers: {} };
    const first = await bus.publish(message);
    const second = await bus.publish(message);
    expect(first.duplicate).toBe(false);
    expect(second).toMatchObject({ duplicate: true, seq: first.seq });
    expect((await jsm.streams.info(stream, { subjects_filter: subject("ok.dup") })).state.subjects).toEqual({ [subject("ok.dup")]: 1 });
  });

  it("given no stream on the subject, then the publish is rejected with NoStreamError", async () => {
    const bus = createStreamPublisher(nc);
    await expect(bus.publish({ subject: subject("nowhere"), payload: "{}", msgId: "n1", headers: {} })).rejects.toBeInstanceOf(NoStreamError);
  });

  it("given a message over the stream's size limit, then JetStream's 4xx refusal is the rejection", async () => {
    const bus = createStreamPublisher(nc);
    const refused = await bus.publish({ subject: subject("small.x"), payload: "x".repeat(500), msgId: "s1", headers: {} }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(JetStreamApiError);
    expect((refused as JetStreamApiError).status).toBe(400);
  });

  it("given a payload over the server's maximum, then the client refuses it before sending", async () => {
    const bus = createStreamPublisher(nc);
    const refused = await bus
      .publish({ subject: subject("ok.big"), payload: "x".repeat(nc.info!.max_payload + 1), msgId: "b1", headers: {} })
      .catch((e: unknown) => e);
    expect((refused as Error).name).toBe("InvalidArgumentError");
    expect(bus.waiting).toBe(0);
  });

  it("given a subscriber that never answers, then the publish is rejected after the timeout, and an answer after that changes nothing", async () => {
    const replyTo: string[] = [];
    const silent = nc.subscribe(subject("silent"), {
      callback: (_e, m) => {
        if (m.reply) replyTo.push(m.reply);
      },
    });
    await nc.flush();
    const bus = createStreamPublisher(nc, { timeoutMs: 200 });
    try {
      await expect(bus.publish({ subject: subject("silent"), payload: "{}", msgId: "t1", headers: {} })).rejects.toBeInstanceOf(PublishTimeoutError);
      expect(bus.waiting).toBe(0);
      // The request reached the subscriber (a paused test process may read it only after the timeout fired).
      await waitFor(() => (replyTo.length > 0 ? true : undefined), { timeoutMs: 5_000, what: "the request at the silent subscriber" });
      expect(replyTo).toHaveLength(1);
      nc.publish(replyTo[0], JSON.stringify({ stream: stream, seq: 1 })); // too late: nobody waits for it
      await nc.flush();
      const next = await bus.publish({ subject: subject("ok.after"), payload: "{}", msgId: `t2-${tag}`, headers: {} });
      expect(next.stream).toBe(stream);
      expect(bus.waiting).toBe(0);
    } finally {
      silent.unsubscribe();
    }
  });

  it("given acknowledgements still awaited, when the connection closes, then each is rejected with PublisherClosedError", async () => {
    const own = await connect({ servers: new URL(natsUrl).host });
    const silent = nc.subscribe(subject("closing"));
    await nc.flush();
    try {
      const bus = createStreamPublisher(own, { timeoutMs: 20_000 });
      const pending = [1, 2, 3].map((i) => bus.publish({ subject: subject("closing"), payload: "{}", msgId: `c${i}`, headers: {} }).catch((e: unknown) => e));
      await own.flush();
      expect(bus.waiting).toBe(3);
      await own.close();
      for (const e of await Promise.all(pending)) expect(e).toBeInstanceOf(PublisherClosedError);
      expect(bus.waiting).toBe(0);
    } finally {
      silent.unsubscribe();
    }
  });

  it("given a connection with its own inbox prefix, then the acknowledgements arrive there, and the connection's publisher is one shared instance", async () => {
    const own = await connectNats(natsUrl, "stream-publisher-test", { inboxPrefix: `_INBOX_sp${tag}` });
    const seen: string[] = [];
    const spy = nc.subscribe(`_INBOX_sp${tag}.>`, {
      callback: (_e, m) => {
        seen.push(m.subject);
      },
    });
    await nc.flush();
    try {
      const bus = streamPublisherOf(own);
      expect(streamPublisherOf(own)).toBe(bus);
      await bus.publish({ subject: subject("ok.inbox"), payload: "{}", msgId: `i-${tag}`, headers: {} });
      // The spy on another connection sees the acknowledgement as well, a moment later.
      await waitFor(() => (seen.length > 0 ? true : undefined), { timeoutMs: 5000, intervalMs: 20, what: "the acknowledgement on the connection's inbox" });
      expect(seen).toHaveLength(1);
    } finally {
      spy.unsubscribe();
      await own.close();
    }
  });
});

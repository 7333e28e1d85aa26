import { randomUUID } from "node:crypto";
import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import type { Subscription } from "@nats-io/transport-node";
import { connectNats, createLogger, createPool, ensureStream, inTransaction, type NatsConnection, type Pool } from "@steward/platform";
import { enqueueOutbox, type OutboxMessage } from "./enqueue";
import { createOutboxRelay, type OutboxRelay } from "./relay";
import { advisoryLocks, freshDatabase, freshNamespace, natsUrl } from "../../../../test/support/databases";
import { waitFor } from "../../../../test/support/wait-for";
import { readSubject } from "../../../../test/support/bus";
import { startTcpProxy } from "../../../../test/support/faults/tcp-proxy";
import { readBacklog } from "../status/backlog";

jest.setTimeout(120_000);

const NANOS_PER_MS = 1_000_000;
const logger = createLogger("relay-test", "silent");
/** Long enough that only LISTEN/NOTIFY (or an explicit drain) can wake a relay during the test. */
const NO_SWEEP = { sweepMs: 10 * 60 * 1000 };

describe("outbox relay (PostgreSQL outbox → JetStream)", () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: Pool;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  const namespace = freshNamespace("ob");
  const streams: string[] = [];
  const cleanups: Array<() => Promise<unknown>> = [];

  /** A stream of its own with a 2-minute duplicate window, plus a core subscription that sees every publish. */
  async function scenario(label: string, maxMsgSize = -1) {
    const stream = `${namespace.toUpperCase()}_${label.toUpperCase()}`;
    const prefix = `${namespace}.${label}`;
    await ensureStream(jsm, {
      name: stream,
      subjects: [`${prefix}.>`],
      duplicate_window: 2 * 60 * 1000 * NANOS_PER_MS,
      max_msg_size: maxMsgSize,
    });
    streams.push(stream);
    // Core NATS subscribers receive every publish, including a second one JetStream drops as a duplicate.
    const seen = new Map<string, number>();
    const sub: Subscription = nc.subscribe(`${prefix}.>`, {
      callback: (_err, msg) => {
        const id = msg.headers?.get("Nats-Msg-Id") ?? "";
        seen.set(id, (seen.get(id) ?? 0) + 1);
      },
    });
    await nc.flush();
    cleanups.push(async () => sub.unsubscribe());
    const messages = async () => (await jsm.streams.info(stream)).state.messages;
    const publishes = () => [...seen.values()].reduce((a, b) => a + b, 0);
    return { stream, prefix, seen, messages, publishes };
  }

  /** Writes `n` rows in transactions of `perTx`, several transactions at once. */
  async function enqueueRows(prefix: string, n: number, perTx = 10): Promise<OutboxMessage[]> {
    const all: OutboxMessage[] = Array.from({ length: n }, (_, i) => ({
      subject: `${prefix}.m${i % 7}`,
      msgId: randomUUID(),
      payload: { i, text: `message ${i}` },
      headers: { "Steward-Test": prefix, "Steward-Index": String(i) },
    }));
    const groups: OutboxMessage[][] = [];
    for (let i = 0; i < all.length; i += perTx) groups.push(all.slice(i, i + perTx));
    await Promise.all(groups.map((g) => inTransaction(pool, (client) => enqueueOutbox(client, g))));
    return all;
  }

  async function unpublished(msgIds: readonly string[]): Promise<number> {
    const { rows } = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM outbox WHERE msg_id = ANY($1::text[]) AND published_at IS NULL", [msgIds]);
    return rows[0].n;
  }

  function relay(relayPool: Pool, relayNc: NatsConnection, batchSize = 256, retry: { maxAttempts?: number; retryBaseMs?: number } = {}): OutboxRelay {
    const r = createOutboxRelay({ pool: relayPool, nc: relayNc, connectionString: db.url, logger }, { ...NO_SWEEP, batchSize, ...retry });
    cleanups.push(() => r.stop());
    return r;
  }

  async function extraConnections(name: string): Promise<{ pool: Pool; nc: NatsConnection }> {
    const p = createPool(db.url, { max: 4 });
    const c = await connectNats(natsUrl, name);
    cleanups.push(
      async () => c.close(),
      async () => p.end(),
    );
    return { pool: p, nc: c };
  }

  beforeAll(async () => {
    db = await freshDatabase("steward_store_outbox");
    pool = createPool(db.url, { max: 10 });
    nc = await connectNats(natsUrl, "steward-relay-test");
    jsm = await jetstreamManager(nc);
  });

  afterAll(async () => {
    // Relays first (they hold their pools and connections), then everything else.
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    for (const stream of streams) await jsm?.streams.delete(stream).catch(() => undefined);
    await nc?.close().catch(() => undefined);
    await pool?.end().catch(() => undefined);
    if (db) await db.drop();
  });

  it("two relays side by side publish every row exactly once, woken by the inserts", async () => {
    const s = await scenario("pair");
    const a = await extraConnections("steward-relay-a");
    const b = await extraConnections("steward-relay-b");
    // Small batches so that the two relays interleave their claims.
    const relayA = relay(a.pool, a.nc, 16);
    const relayB = relay(b.pool, b.nc, 16);
    await Promise.all([relayA.start(), relayB.start()]);

    const N = 300;
    const rows = await enqueueRows(s.prefix, N);
    const ids = rows.map((r) => r.msgId);

    await waitFor(async () => ((await unpublished(ids)) === 0 ? true : undefined), {
      timeoutMs: 30_000,
      what: "every outbox row to be marked published",
    });
    await waitFor(async () => ((await s.messages()) === N ? true : undefined), {
      timeoutMs: 30_000,
      what: `${N} messages on the stream`,
    });
    // Let any in-flight drain finish (a drain called meanwhile joins it and answers its count)...
    await relayA.drain();
    await relayB.drain();
    // ...then nothing is pending, so a fresh drain of either relay publishes nothing more.
    expect(await relayA.drain()).toBe(0);
    expect(await relayB.drain()).toBe(0);
    await waitFor(() => (s.publishes() >= N ? true : undefined), { timeoutMs: 10_000, what: "the core subscriber" });

    // Exactly once: JetStream holds N messages, and no row was even sent twice (the relays take turns, not dedup).
    expect(await s.messages()).toBe(N);
    expect(s.publishes()).toBe(N);
    expect([...s.seen.values()].every((count) => count === 1)).toBe(true);
    expect(new Set(s.seen.keys())).toEqual(new Set(ids));

    const stored = await readSubject(nc, s.stream, `${s.prefix}.>`, N + 10);
    expect(stored).toHaveLength(N);
    expect(new Set(stored.map((m) => m.headers["Nats-Msg-Id"]))).toEqual(new Set(ids));
    // Rows written in one transaction (a run's events) reach the stream in the order they were written,
    // whichever relay published them.
    const position = new Map(stored.map((m, i) => [m.headers["Nats-Msg-Id"], i]));
    for (let g = 0; g < N; g += 10) {
      const positions = ids.slice(g, g + 10).map((id) => position.get(id)!);
      expect(positions).toEqual([...positions].sort((x, y) => x - y));
    }
    // Payload and headers travel as written.
    const byId = new Map(rows.map((r) => [r.msgId, r]));
    for (const m of stored) {
      const row = byId.get(m.headers["Nats-Msg-Id"])!;
      expect(m.subject).toBe(row.subject);
      expect(m.json).toEqual(row.payload);
      expect(m.headers["Steward-Index"]).toBe(row.headers["Steward-Index"]);
      expect(m.headers["Steward-Test"]).toBe(s.prefix);
    }

    const { rows: marks } = await pool.query<{ n: number; published: number }>(
      "SELECT count(*)::int AS n, count(published_at)::int AS published FROM outbox WHERE msg_id = ANY($1::text[])",
      [ids],
    );
    expect(marks[0]).toEqual({ n: N, published: N });

    await Promise.all([relayA.stop(), relayB.stop()]);
  });

  it("a relay for some subjects leaves the turn to the relay publishing now; the relay for every subject waits for it", async () => {
    const s = await scenario("turns");
    const ids = (await enqueueRows(s.prefix, 5, 5)).map((r) => r.msgId);
    // Another relay has the turn: its transaction holds the relays' lock.
    const holder = await pool.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT pg_advisory_xact_lock(hashtextextended('steward.outbox.relay', 0))");
      const some = createOutboxRelay({ pool, nc, connectionString: db.url, logger }, { ...NO_SWEEP, subjectPrefixes: [s.prefix] });
      cleanups.push(() => some.stop());
      expect(await some.drain()).toBe(0);
      expect(await unpublished(ids)).toBe(5);

      const every = relay(pool, nc);
      const waited = every.drain();
      await waitFor(async () => ((await advisoryLocks(pool, false)) > 0 ? true : undefined), {
        timeoutMs: 10_000,
        what: "the relay for every subject to wait for its turn",
      });
      await holder.query("COMMIT");
      expect(await waited).toBe(5);
      expect(await unpublished(ids)).toBe(0);
    } finally {
      holder.release();
    }
  });

  it("a relay started after a stop publishes the rows written meanwhile; a republish after a crash is deduplicated", async () => {
    const s = await scenario("restart");
    const first = await extraConnections("steward-relay-first");
    const relay1 = relay(first.pool, first.nc, 64);
    await relay1.start();

    const batch1 = await enqueueRows(s.prefix, 100);
    await waitFor(async () => ((await s.messages()) === 100 ? true : undefined), {
      timeoutMs: 30_000,
      what: "the first batch on the stream",
    });
    await waitFor(async () => ((await unpublished(batch1.map((r) => r.msgId))) === 0 ? true : undefined), {
      what: "the first batch to be marked published",
    });
    await relay1.stop();

    // Written while no relay runs: nothing publishes them yet.
    const batch2 = await enqueueRows(s.prefix, 120);
    const ids2 = batch2.map((r) => r.msgId);
    expect(await unpublished(ids2)).toBe(120);
    // The stopped relay no longer listens, so the inserts' notification woke nobody.
    expect(await s.messages()).toBe(100);

    const second = await extraConnections("steward-relay-second");
    const relay2 = relay(second.pool, second.nc, 64);
    await relay2.start(); // drains what was written while nobody listened
    await waitFor(async () => ((await s.messages()) === 220 ? true : undefined), {
      timeoutMs: 30_000,
      what: "the rows written during the outage on the stream",
    });
    await waitFor(async () => ((await unpublished(ids2)) === 0 ? true : undefined), {
      what: "the second batch to be marked published",
    });
    await relay2.drain();
    await waitFor(() => (s.publishes() >= 220 ? true : undefined), { what: "the core subscriber to see both batches" });
    expect(s.publishes()).toBe(220);

    // A crash between publish and commit: the rows are on the stream but not marked. Simulate it for 50 rows.
    const crashed = [...batch1.slice(0, 30), ...batch2.slice(0, 20)].map((r) => r.msgId);
    const reset = await pool.query("UPDATE outbox SET published_at = NULL WHERE msg_id = ANY($1::text[])", [crashed]);
    expect(reset.rowCount).toBe(50);

    // An UPDATE does not notify, so only this drain picks the 50 rows up again and publishes them.
    const republished = await relay2.drain();
    expect(republished).toBe(50);
    expect(await unpublished(crashed)).toBe(0);
    await waitFor(() => (s.publishes() >= 270 ? true : undefined), { what: "the core subscriber to see the republish" });
    // They really were sent a second time...
    expect(s.publishes()).toBe(270);
    expect(crashed.every((id) => s.seen.get(id) === 2)).toBe(true);
    // ...and JetStream dropped every one of them as a duplicate.
    expect(await s.messages()).toBe(220);
    const stored = await readSubject(nc, s.stream, `${s.prefix}.>`, 300);
    const storedIds = stored.map((m) => m.headers["Nats-Msg-Id"]);
    expect(storedIds).toHaveLength(220);
    expect(new Set(storedIds)).toEqual(new Set([...batch1, ...batch2].map((r) => r.msgId)));

    await relay2.stop();
  });

  /** Rows in order, each `{ i }` unless `payloadOf` says otherwise; written in one transaction. */
  async function enqueueShaped(prefix: string, n: number, payloadOf: (i: number) => unknown = (i) => ({ i })): Promise<OutboxMessage[]> {
    const all: OutboxMessage[] = Array.from({ length: n }, (_, i) => ({
      subject: `${prefix}.m`,
      msgId: randomUUID(),
      payload: payloadOf(i),
      headers: { "Steward-Index": String(i) },
    }));
    await inTransaction(pool, (client) => enqueueOutbox(client, all));
    return all;
  }

  async function outboxRows(msgIds: readonly string[]) {
    const { rows } = await pool.query<{ msg_id: string; published: boolean; set_aside: boolean; attempts: number; last_error: string | null }>(
      `SELECT msg_id, published_at IS NOT NULL AS published, set_aside_at IS NOT NULL AS set_aside, attempts, last_error
         FROM outbox WHERE msg_id = ANY($1::text[]) ORDER BY id`,
      [msgIds],
    );
    return rows;
  }

  it("a message NATS refuses never blocks the ones behind it: they go at once, it is set aside after bounded attempts", async () => {
    // The stream takes messages up to 4 KiB; the server takes payloads up to its max_payload (1 MiB by default).
    const s = await scenario("poison", 4096);
    const own = await extraConnections("steward-relay-poison");
    const r = relay(own.pool, own.nc, 256, { maxAttempts: 3, retryBaseMs: 50 });
    const maxPayload = own.nc.info!.max_payload;
    const TOO_BIG_FOR_STREAM = 3;
    const TOO_BIG_FOR_SERVER = 7;
    const rows = await enqueueShaped(s.prefix, 10, (i) =>
      i === TOO_BIG_FOR_STREAM ? { i, blob: "s".repeat(8 * 1024) } : i === TOO_BIG_FOR_SERVER ? { i, blob: "n".repeat(maxPayload + 1024) } : { i },
    );
    const ids = rows.map((m) => m.msgId);
    const good = ids.filter((_, i) => i !== TOO_BIG_FOR_STREAM && i !== TOO_BIG_FOR_SERVER);

    // One drain: every good row is on the stream, in order, the two refused rows among them notwithstanding.
    expect(await r.drain()).toBe(8);
    const stored = await readSubject(nc, s.stream, `${s.prefix}.>`, 20);
    expect(stored.map((m) => m.headers["Nats-Msg-Id"])).toEqual(good);
    let state = await outboxRows(ids);
    expect(state.filter((x) => x.published).map((x) => x.msg_id)).toEqual(good);
    expect(state[TOO_BIG_FOR_STREAM]).toMatchObject({ published: false, set_aside: false, attempts: 1 });
    expect(state[TOO_BIG_FOR_SERVER]).toMatchObject({ published: false, set_aside: false, attempts: 1 });

    // Tried again after the backoff, a bounded number of times, then set aside with the reason.
    state = await waitFor(
      async () => {
        await r.drain();
        const now = await outboxRows(ids);
        return now.filter((x) => x.set_aside).length === 2 ? now : undefined;
      },
      { timeoutMs: 20_000, what: "both refused rows to be set aside" },
    );
    expect(state[TOO_BIG_FOR_STREAM]).toMatchObject({ published: false, set_aside: true, attempts: 3 });
    expect(state[TOO_BIG_FOR_STREAM].last_error).toMatch(/^JetStream refused it \(400, err_code \d+\): .*message size/i);
    expect(state[TOO_BIG_FOR_SERVER]).toMatchObject({ published: false, set_aside: true, attempts: 3 });
    expect(state[TOO_BIG_FOR_SERVER].last_error).toMatch(/^the NATS client refused it: .*max_payload/);
    // Set aside means never sent again, and counted in the status; the backlog itself is empty.
    expect(await r.drain()).toBe(0);
    expect(await s.messages()).toBe(8);
    expect(await readBacklog(pool)).toMatchObject({ outboxBacklog: 0, outboxSetAside: 2 });

    // Behind the set-aside rows, new rows go as usual.
    const later = await enqueueShaped(s.prefix, 3, (i) => ({ later: i }));
    expect(await r.drain()).toBe(3);
    expect(await s.messages()).toBe(11);
    expect((await outboxRows(later.map((m) => m.msgId))).every((x) => x.published)).toBe(true);
    await r.stop();
  });

  it("a run's later row never reaches the stream before an earlier one no stream answered for: that one waits, uncounted, then goes first", async () => {
    // The run's first row has a subject no stream answers for yet, as while its stream is between two leaders;
    // the rows after it would be taken at once. Sent together, they would be on the stream before it.
    const stream = `${namespace.toUpperCase()}_LANES`;
    const prefix = `${namespace}.lanes`;
    await ensureStream(jsm, { name: stream, subjects: [`${prefix}.now.>`], duplicate_window: 2 * 60 * 1000 * NANOS_PER_MS });
    streams.push(stream);
    const own = await extraConnections("steward-relay-lanes");
    const r = relay(own.pool, own.nc, 256, { maxAttempts: 2, retryBaseMs: 50 });
    const runId = randomUUID();
    const message = (subject: string, run: string): OutboxMessage => ({ subject, msgId: randomUUID(), payload: { subject }, headers: {}, runId: run });
    const run = [message(`${prefix}.later.1`, runId), message(`${prefix}.now.2`, runId), message(`${prefix}.now.3`, runId)];
    const other = message(`${prefix}.now.other`, randomUUID());
    await inTransaction(pool, (client) => enqueueOutbox(client, [...run, other]));
    const ids = run.map((m) => m.msgId);

    // Drained again and again, past the attempts a refusal would have: the run's rows stay back, uncounted.
    for (let i = 0; i < 3; i++) {
      await r.drain();
      await waitFor(
        async () => ((await pool.query("SELECT 1 FROM outbox WHERE msg_id = $1 AND retry_at <= clock_timestamp()", [ids[0]])).rowCount ? true : undefined),
        {
          timeoutMs: 5_000,
          what: "the unanswered row to be due again",
        },
      );
    }
    const waiting = await outboxRows(ids);
    expect(waiting.map((x) => [x.published, x.set_aside, x.attempts])).toEqual([
      [false, false, 0],
      [false, false, 0],
      [false, false, 0],
    ]);
    expect(waiting[0].last_error).toBe(`no JetStream stream answered for subject ${prefix}.later.1`);
    expect((await readSubject(nc, stream, `${prefix}.>`, 10)).map((m) => m.headers["Nats-Msg-Id"])).toEqual([other.msgId]);

    // A stream takes the subject now: the run's rows go, in their order.
    await jsm.streams.update(stream, { subjects: [`${prefix}.now.>`, `${prefix}.later.>`] });
    await waitFor(async () => ((await outboxRows(ids)).every((x) => x.published) ? true : (await r.drain(), undefined)), {
      timeoutMs: 10_000,
      what: "the run's rows to be published",
    });
    expect((await readSubject(nc, stream, `${prefix}.>`, 10)).map((m) => m.headers["Nats-Msg-Id"])).toEqual([other.msgId, ...ids]);
    await r.stop();
  });

  it("while NATS is unreachable nothing is counted or set aside; once it is back every row goes, in order", async () => {
    const s = await scenario("outage");
    const proxy = await startTcpProxy({ port: Number(new URL(natsUrl).port || 4222) });
    cleanups.push(() => proxy.close());
    const viaProxy = await connectNats(`nats://127.0.0.1:${proxy.port}`, "steward-relay-outage");
    const p = createPool(db.url, { max: 4 });
    cleanups.push(
      async () => viaProxy.close(),
      async () => p.end(),
    );
    const r = relay(p, viaProxy, 256, { maxAttempts: 2, retryBaseMs: 50 });

    proxy.cut("refuse");
    const rows = await enqueueShaped(s.prefix, 20);
    const ids = rows.map((m) => m.msgId);
    // More failed drains than the refused-message budget: an outage must not spend it.
    for (let attempt = 0; attempt < 3; attempt++) await expect(r.drain()).rejects.toBeDefined();
    const during = await outboxRows(ids);
    expect(during.every((x) => !x.published && !x.set_aside && x.attempts === 0 && x.last_error === null)).toBe(true);
    expect(await s.messages()).toBe(0);

    proxy.restore();
    await waitFor(
      async () => {
        await r.drain().catch(() => undefined);
        return (await outboxRows(ids)).every((x) => x.published) ? true : undefined;
      },
      { timeoutMs: 30_000, what: "every row published once NATS is back" },
    );
    const stored = await readSubject(nc, s.stream, `${s.prefix}.>`, 100);
    expect(stored.map((m) => m.headers["Nats-Msg-Id"])).toEqual(ids);
    await r.stop();
  });
});

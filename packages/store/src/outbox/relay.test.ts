import { randomUUID } from "node:crypto";
import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import type { Subscription } from "@nats-io/transport-node";
import {
  connectNats,
  createLogger,
  createPool,
  ensureStream,
  inTransaction,
  type NatsConnection,
  type Pool,
} from "@steward/platform";
import { enqueueOutbox, type OutboxMessage } from "./enqueue";
import { createOutboxRelay, type OutboxRelay } from "./relay";
import { freshDatabase, freshNamespace, natsUrl } from "../../../../test/support/databases";
import { waitFor } from "../../../../test/support/wait-for";
import { readSubject } from "../../../../test/support/bus";

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
  async function scenario(label: string) {
    const stream = `${namespace.toUpperCase()}_${label.toUpperCase()}`;
    const prefix = `${namespace}.${label}`;
    await ensureStream(jsm, {
      name: stream,
      subjects: [`${prefix}.>`],
      duplicate_window: 2 * 60 * 1000 * NANOS_PER_MS,
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
    const { rows } = await pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM outbox WHERE msg_id = ANY($1::text[]) AND published_at IS NULL",
      [msgIds],
    );
    return rows[0].n;
  }

  function relay(relayPool: Pool, relayNc: NatsConnection, batchSize = 256): OutboxRelay {
    const r = createOutboxRelay({ pool: relayPool, nc: relayNc, connectionString: db.url, logger }, { ...NO_SWEEP, batchSize });
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
    // Let any in-flight drain finish; nothing is pending, so nothing more may be published.
    expect(await relayA.drain()).toBeGreaterThanOrEqual(0);
    expect(await relayB.drain()).toBeGreaterThanOrEqual(0);
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
});

import { randomUUID } from "node:crypto";
import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { connectNats, createLogger, createPool, ensureStream, inTransaction, PublishTimeoutError, type NatsConnection, type Pool } from "@steward/platform";
import { enqueueOutbox, type OutboxMessage } from "./enqueue";
import { createOutboxRelay, type OutboxRelay, type OutboxRelayOptions } from "./relay";
import { startTcpProxy } from "../../../../test/support/faults/tcp-proxy";
import { freshDatabase, freshNamespace, natsUrl } from "../../../../test/support/databases";
import { readSubject } from "../../../../test/support/bus";
import { waitFor } from "../../../../test/support/wait-for";

jest.setTimeout(60_000);

const NANOS_PER_MS = 1_000_000;
const logger = createLogger("relay-wake-test", "silent");
/** Long enough that only a notification or the relay waking itself can publish anything during a test. */
const NO_SWEEP = { sweepMs: 10 * 60 * 1000 };

/**
 * A started relay wakes itself, before its sweep, for what a notification will not bring again: a row due again
 * (no stream answered for it) and a drain that failed while the connection stayed up (a publish timed out while a
 * stream elected its leader). Each case has a database of its own, so no other relay takes its rows.
 */
describe("a started outbox relay waking itself (real PostgreSQL and JetStream)", () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: Pool;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  const namespace = freshNamespace("rw");
  const streams: string[] = [];
  const relays: OutboxRelay[] = [];

  beforeEach(async () => {
    db = await freshDatabase("steward_store_relay_wake");
    pool = createPool(db.url, { max: 4 });
  });
  afterEach(async () => {
    for (const r of relays.splice(0)) await r.stop().catch(() => undefined);
    await pool.end().catch(() => undefined);
    await db.drop();
  });
  beforeAll(async () => {
    nc = await connectNats(natsUrl, "steward-relay-wake-test");
    jsm = await jetstreamManager(nc);
  });
  afterAll(async () => {
    for (const stream of streams) await jsm.streams.delete(stream).catch(() => undefined);
    await nc.close();
  });

  async function streamFor(label: string, subjects: string[]): Promise<string> {
    const stream = `${namespace.toUpperCase()}_${label.toUpperCase()}`;
    await ensureStream(jsm, { name: stream, subjects, duplicate_window: 2 * 60 * 1000 * NANOS_PER_MS });
    streams.push(stream);
    return stream;
  }

  async function startedRelay(conn: NatsConnection, retryBaseMs: number, more: OutboxRelayOptions = {}): Promise<OutboxRelay> {
    const r = createOutboxRelay({ pool, nc: conn, connectionString: db.url, logger }, { ...NO_SWEEP, retryBaseMs, ...more });
    relays.push(r);
    await r.start();
    return r;
  }

  const message = (subject: string, runId?: string): OutboxMessage => ({
    subject,
    msgId: randomUUID(),
    payload: { subject },
    headers: {},
    ...(runId ? { runId } : {}),
  });

  async function rows(msgIds: readonly string[]) {
    const { rows: found } = await pool.query<{ published: boolean; last_error: string | null }>(
      "SELECT published_at IS NOT NULL AS published, last_error FROM outbox WHERE msg_id = ANY($1::text[]) ORDER BY id",
      [msgIds],
    );
    return found;
  }

  it("given a run's row no stream answered for, when a stream takes its subject, then the relay publishes it and the row behind it when due, in order", async () => {
    const prefix = `${namespace}.due`;
    const stream = await streamFor("due", [`${prefix}.now.>`]);
    await startedRelay(nc, 100);
    const runId = randomUUID();
    const run = [message(`${prefix}.later.1`, runId), message(`${prefix}.now.2`, runId)];
    const ids = run.map((m) => m.msgId);
    await inTransaction(pool, (client) => enqueueOutbox(client, run));
    await waitFor(async () => ((await rows(ids))[0].last_error !== null ? true : undefined), {
      timeoutMs: 10_000,
      what: "the first row to be tried, unanswered",
    });

    await jsm.streams.update(stream, { subjects: [`${prefix}.now.>`, `${prefix}.later.>`] });
    await waitFor(async () => ((await rows(ids)).every((r) => r.published) ? true : undefined), {
      timeoutMs: 15_000,
      what: "both rows published, no notification since",
    });
    expect((await readSubject(nc, stream, `${prefix}.>`, 10)).map((m) => m.headers["Nats-Msg-Id"])).toEqual(ids);
  });

  it("given publishes that time out while the connection stays up, then the relay tries again after a short pause, every row in order", async () => {
    const prefix = `${namespace}.timeout`;
    const stream = await streamFor("timeout", [`${prefix}.>`]);
    // The first three publishes time out, as while a stream elects its leader; the connection never drops, so
    // no reconnect wakes the relay.
    let failing = 3;
    const conn = new Proxy(nc, {
      get(target, prop, receiver) {
        if (prop !== "publish") return Reflect.get(target, prop, receiver);
        return (...args: Parameters<NatsConnection["publish"]>) => {
          if (args[2]?.reply && failing > 0) {
            failing--;
            throw new PublishTimeoutError(args[0], 5000);
          }
          return target.publish(...args);
        };
      },
    });
    await startedRelay(conn, 1000);
    const sent = [message(`${prefix}.a`), message(`${prefix}.b`), message(`${prefix}.c`)];
    const ids = sent.map((m) => m.msgId);
    await inTransaction(pool, (client) => enqueueOutbox(client, sent));
    await waitFor(async () => ((await rows(ids)).every((r) => r.published) ? true : undefined), {
      timeoutMs: 15_000,
      what: "every row published after the timeouts",
    });
    expect(failing).toBe(0);
    expect((await readSubject(nc, stream, `${prefix}.>`, 10)).map((m) => m.headers["Nats-Msg-Id"])).toEqual(ids);
  });

  it("given a relay that loses NATS while it claims, then the claim is undone: nothing is published or counted, and the rows go once NATS is back", async () => {
    const prefix = `${namespace}.claim`;
    const stream = await streamFor("claim", [`${prefix}.>`]);
    // The link answers up at the turn's start and down from the look after the claim on, as when the connection
    // drops while the relay waits for its turn.
    let looks = 0;
    let back = false;
    const link = { connected: () => back || looks++ === 0, onReconnect: () => undefined };
    const r = createOutboxRelay({ pool, nc, connectionString: db.url, logger, link }, NO_SWEEP);
    relays.push(r);
    const sent = [message(`${prefix}.a`), message(`${prefix}.b`)];
    const ids = sent.map((m) => m.msgId);
    await inTransaction(pool, (client) => enqueueOutbox(client, sent));
    await expect(r.drain()).rejects.toMatchObject({ name: "BusAwayError" });
    expect(looks).toBe(2);
    expect(await rows(ids)).toEqual([
      { published: false, last_error: null },
      { published: false, last_error: null },
    ]);
    const { rows: counted } = await pool.query<{ attempts: number }>("SELECT attempts FROM outbox WHERE msg_id = ANY($1::text[])", [ids]);
    expect(counted.map((c) => c.attempts)).toEqual([0, 0]);

    back = true;
    await expect(r.drain()).resolves.toBe(2);
    expect((await readSubject(nc, stream, `${prefix}.>`, 10)).map((m) => m.headers["Nats-Msg-Id"])).toEqual(ids);
  });

  it("given a started relay whose connection is down, then it takes no turn, and a relay that can publish publishes meanwhile", async () => {
    const prefix = `${namespace}.away`;
    const stream = await streamFor("away", [`${prefix}.>`]);
    const proxy = await startTcpProxy({ port: Number(new URL(natsUrl).port || 4222) });
    const viaProxy = await connectNats(`nats://127.0.0.1:${proxy.port}`, "steward-relay-wake-away");
    try {
      // The relay for every subject (as the gateway's) on the proxied connection; one for the rows' subjects only
      // (as a runner's, which leaves the turn to a relay publishing now) on a connection that stays up.
      const away = await startedRelay(viaProxy, 1000);
      await startedRelay(nc, 1000, { subjectPrefixes: [`${prefix}.runner.`] });
      const lost = (async () => {
        for await (const s of viaProxy.status()) if (s.type === "disconnect") return true;
        return false;
      })();
      proxy.cut("blackhole");
      expect(await lost).toBe(true);

      // Only the relay that lost its connection may publish this one; the rows behind are the other relay's too.
      const gatewayOnly = message(`${prefix}.gateway.1`);
      await inTransaction(pool, (client) => enqueueOutbox(client, [gatewayOnly]));
      await expect(away.drain()).rejects.toMatchObject({ name: "BusAwayError" });
      const theirs = [message(`${prefix}.runner.1`), message(`${prefix}.runner.2`)];
      await inTransaction(pool, (client) => enqueueOutbox(client, theirs));
      const ids = theirs.map((m) => m.msgId);
      await waitFor(async () => ((await rows(ids)).every((r) => r.published) ? true : undefined), {
        timeoutMs: 15_000,
        what: "the other relay to publish its rows",
      });
      expect((await rows([gatewayOnly.msgId]))[0].published).toBe(false);

      // Back: the relay publishes what waited for it, woken by the reconnect.
      proxy.restore();
      await waitFor(async () => ((await rows([gatewayOnly.msgId]))[0].published ? true : undefined), {
        timeoutMs: 20_000,
        what: "the row only it may publish, once NATS is back",
      });
      expect((await readSubject(nc, stream, `${prefix}.>`, 10)).map((m) => m.headers["Nats-Msg-Id"])).toEqual([...ids, gatewayOnly.msgId]);
    } finally {
      await viaProxy.close().catch(() => undefined);
      await proxy.close();
    }
  });
});

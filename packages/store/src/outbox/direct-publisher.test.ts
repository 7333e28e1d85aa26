import { randomUUID } from "node:crypto";
import pg from "pg";
import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { busNames, initialRunState, type RunEvent } from "@steward/contract";
import { connectNats, createLogger, createPool, provisionTopology, type NatsConnection, type Pool } from "@steward/platform";
import { PUBLISHED_THROUGH_HEADER, appendRunEvents } from "../runs/append-run-events";
import { createDirectPublisher } from "./direct-publisher";
import { enqueueOutbox } from "./enqueue";
import { createOutboxRelay } from "./relay";
import { freshDatabase, freshNamespace, natsUrl } from "../../../../test/support/databases";
import { waitFor } from "../../../../test/support/wait-for";
import { readSubject } from "../../../../test/support/bus";

jest.setTimeout(60_000);

const logger = createLogger("direct-publisher-test", "silent");

describe("a writer publishing its own events' copies and commands after commit (real PostgreSQL and JetStream)", () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: Pool;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  const namespace = freshNamespace("dp");
  const names = busNames(namespace);

  beforeAll(async () => {
    db = await freshDatabase("steward_store_direct");
    pool = createPool(db.url, { max: 6 });
    nc = await connectNats(natsUrl, "steward-direct-publisher-test");
    jsm = await jetstreamManager(nc);
    await provisionTopology(nc, names);
  });

  afterAll(async () => {
    for (const stream of [names.commandStream, names.eventStream, names.deadLetterStream]) await jsm?.streams.delete(stream).catch(() => undefined);
    await nc?.close();
    await pool?.end();
    await db?.drop();
  });

  const queued = (): RunEvent => ({
    type: "run.queued",
    data: { input: "q", mode: "agent", response_language: null, created_by: "u", created_at: "2026-12-01T10:00:00.000000Z", deadline_at: "2026-12-01T10:03:00.000000Z", thread_id: null },
  });
  const started = (seq: number): RunEvent => ({ type: "run.started", data: { runner_id: `r${seq}`, started_at: "2026-12-01T10:00:01.000000Z" } });
  const command = (runId: string, n = 1) => ({ subject: names.runRequested, msgId: `req-${runId}-${n}`, payload: { run_id: runId, n }, headers: { "Steward-Run-Id": runId } });
  const onStream = async (stream: string, subject: string) => (await jsm.streams.info(stream, { subjects_filter: subject })).state.subjects?.[subject] ?? 0;
  const seqsOnBus = async (runId: string) => (await readSubject(nc, names.eventStream, names.runEvents(runId))).map((m) => Number(m.headers["Steward-Seq"]));
  /** The run's commands on the (work-queue, not consumed here) command stream, in stream order: each one's `n`. */
  const commandsOnBus = async (runId: string) => {
    const { first_seq, last_seq } = (await jsm.streams.info(names.commandStream)).state;
    const out: number[] = [];
    for (let seq = first_seq; seq > 0 && seq <= last_seq; seq++) {
      const m = await jsm.streams.getMessage(names.commandStream, { seq }).catch(() => null);
      if (m?.header.get("Steward-Run-Id") === runId) out.push(m.json<{ n: number }>().n);
    }
    return out;
  };
  const rowsOf = async <T extends pg.QueryResultRow>(sql: string, runId: string) => (await pool.query<T>(sql, [runId])).rows;
  /** How far the run's events are on the bus, and whether its writer holds them from the relays. */
  const runOf = async (runId: string) =>
    (await rowsOf<{ version: number; published_version: number; held: boolean }>("SELECT version, published_version, publish_held_until IS NOT NULL AS held FROM runs WHERE id = $1", runId))[0];
  /** The run's commands in the outbox (no copy is written there any more). */
  const commandsOf = (runId: string) =>
    rowsOf<{ published: boolean; held: boolean; after_version: number }>("SELECT published_at IS NOT NULL AS published, retry_at IS NOT NULL AS held, after_version FROM outbox WHERE run_id = $1 ORDER BY id", runId);
  const allOut = async (runId: string) => {
    const run = await runOf(runId);
    return run.published_version === run.version && (await commandsOf(runId)).every((c) => c.published);
  };
  const newRelay = () => createOutboxRelay({ pool, nc, connectionString: db.url, logger }, { sweepMs: 600_000 });

  /** A relay drained until every event and command of the run is on the bus (what is held once its grace has passed). */
  async function relayPublishesAll(runId: string, what: string): Promise<void> {
    const relay = newRelay();
    try {
      await waitFor(async () => ((await allOut(runId)) ? true : (await relay.drain(), undefined)), { timeoutMs: 10_000, intervalMs: 250, what });
    } finally {
      await relay.stop();
    }
  }

  it("given publishDirect, then the copies come back to publish and the run is kept from the relays; the run's command waits behind them", async () => {
    const runId = randomUUID();
    const appended = await appendRunEvents(pool, { runId, tenantId: "t", state: initialRunState, events: [queued()], commands: [command(runId)], namespace, publishDirect: true });
    expect(appended.direct.map((r) => [r.subject, r.version, r.id])).toEqual([[names.runEvent(runId, "run.queued"), 1, appended.events[0].metadata.event_id]]);
    expect(JSON.parse(appended.direct[0].payload)).toMatchObject({ type: "run.queued", metadata: { run_id: runId, seq: 1 } });
    expect(await runOf(runId)).toEqual({ version: 1, published_version: 0, held: true });
    expect(await commandsOf(runId)).toEqual([{ published: false, held: false, after_version: 1 }]);

    // A relay woken now publishes neither the copy its writer is publishing nor the run's command behind it.
    const relay = newRelay();
    try {
      expect(await relay.drain()).toBe(0);
      expect(await onStream(names.eventStream, names.runEvent(runId, "run.queued"))).toBe(0);
      // The writer publishes its copy: the command is the relay's now.
      const publisher = createDirectPublisher({ pool, nc, logger });
      publisher.publish(runId, appended.direct);
      await publisher.stop();
      expect(await relay.drain()).toBe(1);
      expect(await commandsOnBus(runId)).toEqual([1]);
      expect(await allOut(runId)).toBe(true);
    } finally {
      await relay.stop();
    }
  });

  it("when the writer publishes, then its copies are on the stream at once and the run is marked published through them", async () => {
    const runId = randomUUID();
    const appended = await appendRunEvents(pool, { runId, tenantId: "t", state: initialRunState, events: [queued(), started(2)], namespace, publishDirect: true });
    expect(appended.direct.map((r) => r.version)).toEqual([1, 2]);
    const publisher = createDirectPublisher({ pool, nc, logger });
    publisher.publish(runId, appended.direct);
    await publisher.stop();
    expect(await seqsOnBus(runId)).toEqual([1, 2]);
    expect(await runOf(runId)).toMatchObject({ version: 2, published_version: 2 });
    const relay = newRelay();
    try {
      expect(await relay.drain()).toBe(0);
    } finally {
      await relay.stop();
    }
  });

  it("given a writer that died before publishing, then a relay publishes its events once their grace has passed, and a late second publish is dropped", async () => {
    const runId = randomUUID();
    const appended = await appendRunEvents(pool, { runId, tenantId: "t", state: initialRunState, events: [queued()], namespace, publishDirect: true });
    const relay = newRelay();
    try {
      await relay.drain();
      expect(await onStream(names.eventStream, names.runEvent(runId, "run.queued"))).toBe(0);
      const what = "the relay to take the run's event after its grace";
      await waitFor(async () => ((await runOf(runId)).published_version === 1 ? true : (await relay.drain(), undefined)), { timeoutMs: 10_000, intervalMs: 250, what });
    } finally {
      await relay.stop();
    }
    expect(await seqsOnBus(runId)).toEqual([1]);
    // The writer comes back to it after all: JetStream keeps one copy.
    const publisher = createDirectPublisher({ pool, nc, logger });
    publisher.publish(runId, appended.direct);
    await publisher.stop();
    expect(await onStream(names.eventStream, names.runEvent(runId, "run.queued"))).toBe(1);
  });

  it("given a run held by its writer, then a relay publishes none of its later events (appended by the writer too), other runs' at once", async () => {
    const x = randomUUID();
    const y = randomUUID();
    const publisher = createDirectPublisher({ pool, nc, logger });
    const first = await appendRunEvents(pool, { runId: x, tenantId: "t", state: initialRunState, events: [queued()], namespace, publishDirect: true });
    publisher.publish(x, first.direct);
    const second = await appendRunEvents(pool, { runId: x, tenantId: "t", state: first.state, events: [started(2)], namespace, publishDirect: true, own: publisher.pendingOf(x) });
    expect(second.direct.map((r) => r.version)).toEqual([2]);
    await appendRunEvents(pool, { runId: y, tenantId: "t", state: initialRunState, events: [queued()], namespace });
    const relay = newRelay();
    try {
      expect(await relay.drain()).toBe(1);
      expect(await seqsOnBus(y)).toEqual([1]);
      expect(await onStream(names.eventStream, names.runEvent(x, "run.started"))).toBe(0);
      publisher.publish(x, second.direct);
      await publisher.stop();
      expect(await seqsOnBus(x)).toEqual([1, 2]);
      expect(await relay.drain()).toBe(0);
    } finally {
      await relay.stop();
    }
  });

  it("when a direct publish fails, then the run's later events are not published directly; the relay publishes them all, in order, after their grace", async () => {
    const runId = randomUUID();
    const publisher = createDirectPublisher({ pool, nc, logger });
    const one = await appendRunEvents(pool, { runId, tenantId: "t", state: initialRunState, events: [queued()], namespace, publishDirect: true });
    // A subject no stream takes: JetStream refuses it, as it would a copy while the bus is away.
    publisher.publish(runId, [{ ...one.direct[0], subject: `${namespace}.nowhere` }]);
    const two = await appendRunEvents(pool, { runId, tenantId: "t", state: one.state, events: [started(2)], namespace, publishDirect: true, own: publisher.pendingOf(runId) });
    expect(two.direct).toHaveLength(1);
    publisher.publish(runId, two.direct);
    await publisher.stop();
    expect(publisher.failed(runId)).toBe(true);
    expect(publisher.pendingOf(runId)).toEqual({ fromVersion: null, throughVersion: null, commandIds: [] });
    expect(await seqsOnBus(runId)).toEqual([]);
    expect(await runOf(runId)).toEqual({ version: 2, published_version: 0, held: true });

    await relayPublishesAll(runId, "the relay to publish both events after their grace");
    expect(await seqsOnBus(runId)).toEqual([1, 2]);
    publisher.release(runId);
    expect(publisher.failed(runId)).toBe(false);
  });

  it("given an earlier event of the run held for another writer, then the next writer's events are not published directly but by a relay, after it", async () => {
    // A runner died (or its publish failed) with the run's first event held; another writer drives the run on.
    const runId = randomUUID();
    const dead = await appendRunEvents(pool, { runId, tenantId: "t", state: initialRunState, events: [queued()], namespace, publishDirect: true });
    expect(dead.direct).toHaveLength(1);
    const next = await appendRunEvents(pool, { runId, tenantId: "t", state: dead.state, events: [started(2)], namespace, publishDirect: true });
    expect(next.direct).toEqual([]);
    // Handed to the relays, the dead writer's event first.
    expect(await runOf(runId)).toEqual({ version: 2, published_version: 0, held: false });

    await relayPublishesAll(runId, "the relay to publish the held event, then the next");
    expect(await seqsOnBus(runId)).toEqual([1, 2]);
    // Every earlier event is out: the writer publishes directly again.
    const third = await appendRunEvents(pool, { runId, tenantId: "t", state: next.state, events: [started(3)], namespace, publishDirect: true });
    expect(third.direct.map((r) => r.version)).toEqual([3]);
    await relayPublishesAll(runId, "the relay to publish the third event after its grace");
  });

  it("given the writer's own earlier events still on their way, then its next events go directly too, in order", async () => {
    const runId = randomUUID();
    const publisher = createDirectPublisher({ pool, nc, logger }, { markEveryMs: 600_000 });
    const one = await appendRunEvents(pool, { runId, tenantId: "t", state: initialRunState, events: [queued()], namespace, publishDirect: true });
    publisher.publish(runId, one.direct);
    expect(publisher.pendingOf(runId)).toEqual({ fromVersion: 1, throughVersion: 1, commandIds: [] });
    const two = await appendRunEvents(pool, { runId, tenantId: "t", state: one.state, events: [started(2)], namespace, publishDirect: true, own: publisher.pendingOf(runId) });
    expect(two.direct.map((r) => r.version)).toEqual([2]);
    publisher.publish(runId, two.direct);
    await publisher.stop();
    expect(publisher.pendingOf(runId)).toEqual({ fromVersion: null, throughVersion: null, commandIds: [] });
    expect(await seqsOnBus(runId)).toEqual([1, 2]);
    expect(await runOf(runId)).toMatchObject({ version: 2, published_version: 2 });
  });

  it("given another writer's event after the writer's own pending ones, then the writer's next events are not published directly before it, and none is lost", async () => {
    // The runner is still publishing its event 1 (not yet marked) when the gateway appends event 2 for the relays.
    const runId = randomUUID();
    const publisher = createDirectPublisher({ pool, nc, logger }, { markEveryMs: 600_000 });
    const one = await appendRunEvents(pool, { runId, tenantId: "t", state: initialRunState, events: [queued()], namespace, publishDirect: true });
    publisher.publish(runId, one.direct);
    const foreign = await appendRunEvents(pool, { runId, tenantId: "t", state: one.state, events: [started(2)], namespace });
    const three = await appendRunEvents(pool, { runId, tenantId: "t", state: foreign.state, events: [started(3)], namespace, publishDirect: true, own: publisher.pendingOf(runId) });
    publisher.publish(runId, three.direct);
    await publisher.stop();
    await relayPublishesAll(runId, "the relay to publish the run's events");
    expect(await seqsOnBus(runId)).toEqual([1, 2, 3]);
    expect(three.direct).toEqual([]);
  });

  /** The test's connection, recording for each request how many acknowledgements had come back before it was sent. */
  function countingConnection(): { conn: NatsConnection; sentAfterAcks: number[] } {
    const sentAfterAcks: number[] = [];
    let acks = 0;
    const conn = new Proxy(nc, {
      get(target, prop, receiver) {
        if (prop !== "request") return Reflect.get(target, prop, receiver);
        return (...args: Parameters<NatsConnection["request"]>) => {
          sentAfterAcks.push(acks);
          return target.request(...args).finally(() => void acks++);
        };
      },
    });
    return { conn, sentAfterAcks };
  }

  it("given several copies of one commit, then each is sent only once the one before it is acknowledged, and they reach the stream in their order", async () => {
    const runId = randomUUID();
    const appended = await appendRunEvents(pool, { runId, tenantId: "t", state: initialRunState, events: [queued(), started(2)], namespace, publishDirect: true });
    const { conn, sentAfterAcks } = countingConnection();
    const publisher = createDirectPublisher({ pool, nc: conn, logger });
    publisher.publish(runId, appended.direct);
    const later = await appendRunEvents(pool, { runId, tenantId: "t", state: appended.state, events: [started(3)], namespace, publishDirect: true, own: publisher.pendingOf(runId) });
    publisher.publish(runId, later.direct);
    await publisher.stop();
    expect(sentAfterAcks).toEqual([0, 1, 2]);
    expect(await seqsOnBus(runId)).toEqual([1, 2, 3]);
    expect(await runOf(runId)).toMatchObject({ version: 3, published_version: 3 });
  });

  it("given a commit's first copy unanswered and the next one a stream would take, then the next one is never sent before it; the relay publishes both, in order", async () => {
    // As while the stream is between two leaders: nobody answers for the first copy, and the stream takes what follows.
    const runId = randomUUID();
    const appended = await appendRunEvents(pool, { runId, tenantId: "t", state: initialRunState, events: [queued(), started(2)], namespace, publishDirect: true });
    const publisher = createDirectPublisher({ pool, nc, logger });
    publisher.publish(runId, [{ ...appended.direct[0], subject: `${namespace}.nowhere` }, appended.direct[1]]);
    await publisher.stop();
    expect(publisher.failed(runId)).toBe(true);
    expect(await seqsOnBus(runId)).toEqual([]);
    expect(await runOf(runId)).toMatchObject({ published_version: 0 });
    await relayPublishesAll(runId, "the relay to publish both events after their grace");
    expect(await seqsOnBus(runId)).toEqual([1, 2]);
  });

  it("given a copy of a commit refused, then the run is marked through the copies before it, and its later events go by the relays, in order after their grace", async () => {
    const runId = randomUUID();
    const appended = await appendRunEvents(pool, { runId, tenantId: "t", state: initialRunState, events: [queued(), started(2)], namespace, publishDirect: true });
    const publisher = createDirectPublisher({ pool, nc, logger });
    publisher.publish(runId, [appended.direct[0], { ...appended.direct[1], subject: `${namespace}.nowhere` }]);
    const later = await appendRunEvents(pool, { runId, tenantId: "t", state: appended.state, events: [started(3)], namespace, publishDirect: true, own: publisher.pendingOf(runId) });
    publisher.publish(runId, later.direct);
    await publisher.stop();
    expect(publisher.failed(runId)).toBe(true);
    expect(await seqsOnBus(runId)).toEqual([1]);
    expect(await runOf(runId)).toEqual({ version: 3, published_version: 1, held: true });
    await relayPublishesAll(runId, "the relay to publish the refused event and the one after it");
    expect(await seqsOnBus(runId)).toEqual([1, 2, 3]);
  });

  it("given events without publishDirect, then nothing comes back and they wake the relays once per commit; events a writer publishes wake nobody", async () => {
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    let notified = 0;
    listener.on("notification", () => notified++);
    await listener.query("LISTEN steward_outbox");
    const direct = randomUUID();
    const plain = randomUUID();
    try {
      const own = await appendRunEvents(pool, { runId: direct, tenantId: "t", state: initialRunState, events: [queued()], namespace, publishDirect: true });
      const ownNext = await appendRunEvents(pool, { runId: direct, tenantId: "t", state: own.state, events: [started(2)], commands: [command(direct)], namespace, publishDirect: true, directCommands: true, own: { fromVersion: 1, throughVersion: 1, commandIds: [] } });
      expect(ownNext.direct).toHaveLength(2);
      const appended = await appendRunEvents(pool, { runId: plain, tenantId: "t", state: initialRunState, events: [queued()], namespace });
      expect(appended.direct).toEqual([]);
      expect(await runOf(plain)).toEqual({ version: 1, published_version: 0, held: false });
      await waitFor(() => (notified > 0 ? true : undefined), { timeoutMs: 5000, what: "the notification of the relays' event" });
      // Notifications come in commit order and before the answer to a later query: the direct appends sent none.
      await listener.query("SELECT 1");
      expect(notified).toBe(1);
      // An event of a run already there and a command for the relays in one commit: one notification.
      await appendRunEvents(pool, { runId: plain, tenantId: "t", state: appended.state, events: [started(2)], commands: [command(plain)], namespace });
      expect(await commandsOf(plain)).toEqual([{ published: false, held: false, after_version: 2 }]);
      await waitFor(() => (notified > 1 ? true : undefined), { timeoutMs: 5000, what: "the notification of the event and the command" });
      await listener.query("SELECT 1");
      expect(notified).toBe(2);
    } finally {
      await listener.end();
    }
    await relayPublishesAll(plain, "the relay to publish the plain run");
    await relayPublishesAll(direct, "the relay to publish the direct run after its grace");
  });

  describe("a writer that publishes the run's command too (the gateway creating a run)", () => {
    const held = (runId: string) => appendRunEvents(pool, { runId, tenantId: "t", state: initialRunState, events: [queued()], commands: [command(runId)], namespace, publishDirect: true, directCommands: true });

    it("given directCommands, then the command comes back after the copy, held, naming its own id as published-through; on the bus in that order", async () => {
      const runId = randomUUID();
      const appended = await held(runId);
      expect(appended.direct.map((r) => [r.subject, r.version])).toEqual([[names.runEvent(runId, "run.queued"), 1], [names.runRequested, undefined]]);
      const [copy, cmd] = appended.direct;
      expect(copy.id).toBe(appended.events[0].metadata.event_id);
      expect(cmd.headers).toMatchObject({ "Steward-Run-Id": runId, [PUBLISHED_THROUGH_HEADER]: String(cmd.id) });
      expect(copy.headers[PUBLISHED_THROUGH_HEADER]).toBeUndefined();
      // Stored without the hint: a relay publishing the command after its grace sends no claim it cannot vouch for.
      const stored = await pool.query("SELECT headers FROM outbox WHERE id = $1", [cmd.id]);
      expect(stored.rows[0].headers[PUBLISHED_THROUGH_HEADER]).toBeUndefined();
      expect(await runOf(runId)).toEqual({ version: 1, published_version: 0, held: true });
      expect(await commandsOf(runId)).toEqual([{ published: false, held: true, after_version: 1 }]);

      const { conn, sentAfterAcks } = countingConnection();
      const publisher = createDirectPublisher({ pool, nc: conn, logger });
      publisher.publish(runId, appended.direct, { last: true });
      await publisher.stop();
      // One commit, but the command vouches for the copy: it is sent only once the copy is acknowledged.
      expect(sentAfterAcks).toEqual([0, 1]);
      expect(await allOut(runId)).toBe(true);
      const onBus = await jsm.streams.getMessage(names.commandStream, { last_by_subj: names.runRequested });
      expect(onBus?.header.get("Steward-Run-Id")).toBe(runId);
      expect(onBus?.header.get(PUBLISHED_THROUGH_HEADER)).toBe(String(cmd.id));
      expect(await seqsOnBus(runId)).toEqual([1]);
    });

    it("given the receiver's published-through, then the events before it do not hold its own publishing; a later held command still does", async () => {
      const runId = randomUUID();
      const created = await held(runId);
      // Not yet marked (the creator marks them later): without the hint the receiver goes by the relays.
      const without = await appendRunEvents(pool, { runId, tenantId: "t", state: created.state, events: [started(2)], namespace, publishDirect: true });
      expect(without.direct).toEqual([]);

      const other = randomUUID();
      const createdOther = await held(other);
      const through = String(createdOther.direct[1].id);
      // The creator publishes its copy and its command; the receiver is handed the command before the creator marks.
      const creator = createDirectPublisher({ pool, nc, logger }, { markEveryMs: 600_000 });
      creator.publish(other, createdOther.direct, { last: true });
      await waitFor(async () => ((await commandsOnBus(other)).length === 1 ? true : undefined), { timeoutMs: 5000, what: "the creator's command on the bus" });
      expect(await runOf(other)).toMatchObject({ published_version: 0 });
      const hinted = await appendRunEvents(pool, { runId: other, tenantId: "t", state: createdOther.state, events: [started(2)], commands: [command(other, 2)], namespace, publishDirect: true, directCommands: true, publishedThrough: through });
      expect(hinted.direct.map((r) => r.subject)).toEqual([names.runEvent(other, "run.started"), names.runRequested]);
      // Its writer publishes the copy only: the run is on the bus through it, its command 2 still held.
      const publisher = createDirectPublisher({ pool, nc, logger });
      publisher.publish(other, hinted.direct.slice(0, 1));
      await publisher.stop();
      expect(await runOf(other)).toMatchObject({ version: 2, published_version: 2 });
      const after = await appendRunEvents(pool, { runId: other, tenantId: "t", state: hinted.state, events: [started(3)], namespace, publishDirect: true, publishedThrough: through });
      expect(after.direct).toEqual([]);
      await creator.stop();
      await relayPublishesAll(runId, "the relay to publish the first run");
      await relayPublishesAll(other, "the relay to publish the held commands, then the rest");
      expect(await seqsOnBus(other)).toEqual([1, 2, 3]);
      expect(await commandsOnBus(other)).toEqual([1, 2]);
    });

    it("given directCommands without publishDirect, or an earlier command held for another writer, then the command goes by the relays, in order", async () => {
      const runId = randomUUID();
      const plain = await appendRunEvents(pool, { runId, tenantId: "t", state: initialRunState, events: [queued()], commands: [command(runId)], namespace, directCommands: true });
      expect(plain.direct).toEqual([]);
      expect(await runOf(runId)).toMatchObject({ held: false });
      expect(await commandsOf(runId)).toEqual([{ published: false, held: false, after_version: 1 }]);

      const blocked = randomUUID();
      const first = await held(blocked);
      // The creator publishes its copy, then dies before its command.
      const publisher = createDirectPublisher({ pool, nc, logger });
      publisher.publish(blocked, first.direct.slice(0, 1));
      await publisher.stop();
      expect(await runOf(blocked)).toMatchObject({ published_version: 1 });
      const next = await appendRunEvents(pool, { runId: blocked, tenantId: "t", state: first.state, events: [started(2)], commands: [command(blocked, 2)], namespace, publishDirect: true, directCommands: true });
      expect(next.direct).toEqual([]);
      expect(await commandsOf(blocked)).toEqual([{ published: false, held: true, after_version: 1 }, { published: false, held: false, after_version: 2 }]);
      await relayPublishesAll(runId, "the relay to publish the plain run");
      await relayPublishesAll(blocked, "the relay to publish the held command, then the next");
      expect(await seqsOnBus(blocked)).toEqual([1, 2]);
      expect(await commandsOnBus(blocked)).toEqual([1, 2]);
    });
  });
});

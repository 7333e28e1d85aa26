import { randomUUID } from "node:crypto";
import pg from "pg";
import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { busNames, initialRunState, type RunEvent } from "@steward/contract";
import { connectNats, createLogger, createPool, provisionTopology, type NatsConnection, type Pool } from "@steward/platform";
import { PUBLISHED_THROUGH_HEADER, appendRunEvents } from "../runs/append-run-events";
import { createDirectPublisher } from "./direct-publisher";
import { createOutboxRelay } from "./relay";
import { freshDatabase, freshNamespace, natsUrl } from "../../../../test/support/databases";
import { waitFor } from "../../../../test/support/wait-for";
import { readSubject } from "../../../../test/support/bus";

jest.setTimeout(60_000);

const logger = createLogger("direct-publisher-test", "silent");

describe("a writer publishing its own outbox rows after commit (real PostgreSQL and JetStream)", () => {
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
  const command = (runId: string) => ({ subject: names.runRequested, msgId: `req-${runId}`, payload: { run_id: runId }, headers: { "Steward-Run-Id": runId } });
  const onStream = async (stream: string, subject: string) => (await jsm.streams.info(stream, { subjects_filter: subject })).state.subjects?.[subject] ?? 0;
  const outboxOf = async (runId: string) =>
    (
      await pool.query<{ subject: string; published: boolean; held: boolean }>(
        "SELECT subject, published_at IS NOT NULL AS published, retry_at IS NOT NULL AS held FROM outbox WHERE headers->>'Steward-Run-Id' = $1 ORDER BY id",
        [runId],
      )
    ).rows;

  /** A relay drained until every outbox row of the run is published (held rows once their grace has passed). */
  async function relayPublishesAll(runId: string, what: string): Promise<void> {
    const relay = createOutboxRelay({ pool, nc, connectionString: db.url, logger }, { sweepMs: 600_000 });
    try {
      await waitFor(async () => ((await outboxOf(runId)).every((r) => r.published) ? true : (await relay.drain(), undefined)), { timeoutMs: 10_000, intervalMs: 250, what });
    } finally {
      await relay.stop();
    }
  }

  it("given publishDirect, then the copies come back to publish and are kept from the relays; the run's command waits behind them", async () => {
    const runId = randomUUID();
    const appended = await appendRunEvents(pool, { runId, tenantId: "t", state: initialRunState, events: [queued()], commands: [command(runId)], namespace, publishDirect: true });
    expect(appended.direct.map((r) => r.subject)).toEqual([names.runEvent(runId, "run.queued")]);
    expect(JSON.parse(appended.direct[0].payload)).toMatchObject({ type: "run.queued", metadata: { run_id: runId, seq: 1 } });
    const rows = await outboxOf(runId);
    expect(rows.find((r) => r.subject === names.runRequested)).toMatchObject({ held: false });
    expect(rows.find((r) => r.subject !== names.runRequested)).toMatchObject({ held: true });

    // A relay woken now publishes neither the copy its writer is publishing nor the run's command behind it.
    const relay = createOutboxRelay({ pool, nc, connectionString: db.url, logger }, { sweepMs: 600_000 });
    try {
      expect(await relay.drain()).toBe(0);
      expect(await onStream(names.eventStream, names.runEvent(runId, "run.queued"))).toBe(0);
      // The writer publishes its copy: the command is the relay's now.
      const publisher = createDirectPublisher({ pool, nc, logger });
      publisher.publish(runId, appended.direct);
      await publisher.stop();
      expect(await relay.drain()).toBe(1);
      expect(await onStream(names.commandStream, names.runRequested)).toBeGreaterThanOrEqual(1);
      expect((await outboxOf(runId)).every((r) => r.published)).toBe(true);
    } finally {
      await relay.stop();
    }
  });

  it("when the writer publishes, then its rows are on the stream at once and marked published; the command goes after them by the relay", async () => {
    const runId = randomUUID();
    const appended = await appendRunEvents(pool, {
      runId,
      tenantId: "t",
      state: initialRunState,
      events: [queued(), { type: "run.started", data: { runner_id: "r", started_at: "2026-12-01T10:00:01.000000Z" } }],
      commands: [command(runId)],
      namespace,
      publishDirect: true,
    });
    expect(appended.direct).toHaveLength(2);
    const publisher = createDirectPublisher({ pool, nc, logger });
    publisher.publish(runId, appended.direct);
    await publisher.stop();
    expect(await onStream(names.eventStream, names.runEvent(runId, "run.queued"))).toBe(1);
    expect(await onStream(names.eventStream, names.runEvent(runId, "run.started"))).toBe(1);
    expect((await outboxOf(runId)).map((r) => [r.subject === names.runRequested ? "command" : "copy", r.published])).toEqual([
      ["copy", true],
      ["copy", true],
      ["command", false],
    ]);
    const relay = createOutboxRelay({ pool, nc, connectionString: db.url, logger }, { sweepMs: 600_000 });
    try {
      expect(await relay.drain()).toBe(1);
    } finally {
      await relay.stop();
    }
  });

  it("given a writer that died before publishing, then a relay publishes its rows once their grace has passed, and a late second publish is dropped", async () => {
    const runId = randomUUID();
    const appended = await appendRunEvents(pool, { runId, tenantId: "t", state: initialRunState, events: [queued()], namespace, publishDirect: true });
    const relay = createOutboxRelay({ pool, nc, connectionString: db.url, logger }, { sweepMs: 600_000 });
    try {
      expect(await relay.drain()).toBe(0);
      await waitFor(async () => ((await relay.drain()) > 0 ? true : undefined), { timeoutMs: 10_000, intervalMs: 250, what: "the relay to take the row after its grace" });
    } finally {
      await relay.stop();
    }
    // The writer comes back to it after all: JetStream keeps one copy.
    const publisher = createDirectPublisher({ pool, nc, logger });
    publisher.publish(runId, appended.direct);
    await publisher.stop();
    expect(await onStream(names.eventStream, names.runEvent(runId, "run.queued"))).toBe(1);
  });

  const started = (seq: number): RunEvent => ({ type: "run.started", data: { runner_id: `r${seq}`, started_at: "2026-12-01T10:00:01.000000Z" } });
  const seqsOnBus = async (runId: string) =>
    (await readSubject(nc, names.eventStream, names.runEvents(runId))).map((m) => Number(m.headers["Steward-Seq"]));

  it("given a run's row held by its writer, then a relay publishes the run's later rows only after it, other runs' rows at once", async () => {
    const x = randomUUID();
    const y = randomUUID();
    const first = await appendRunEvents(pool, { runId: x, tenantId: "t", state: initialRunState, events: [queued()], namespace, publishDirect: true });
    await appendRunEvents(pool, { runId: x, tenantId: "t", state: first.state, events: [started(2)], namespace });
    await appendRunEvents(pool, { runId: y, tenantId: "t", state: initialRunState, events: [queued()], namespace });
    const relay = createOutboxRelay({ pool, nc, connectionString: db.url, logger }, { sweepMs: 600_000 });
    try {
      expect(await relay.drain()).toBe(1);
      expect(await seqsOnBus(y)).toEqual([1]);
      expect(await onStream(names.eventStream, names.runEvent(x, "run.started"))).toBe(0);
      const publisher = createDirectPublisher({ pool, nc, logger });
      publisher.publish(x, first.direct);
      await publisher.stop();
      expect(await relay.drain()).toBe(1);
      expect(await seqsOnBus(x)).toEqual([1, 2]);
    } finally {
      await relay.stop();
    }
  });

  it("when a direct publish fails, then the run's later rows are not published directly; the relay publishes them all, in order, after their grace", async () => {
    const runId = randomUUID();
    const one = await appendRunEvents(pool, { runId, tenantId: "t", state: initialRunState, events: [queued()], namespace, publishDirect: true });
    const two = await appendRunEvents(pool, { runId, tenantId: "t", state: one.state, events: [started(2)], namespace, publishDirect: true });
    const publisher = createDirectPublisher({ pool, nc, logger });
    // A subject no stream takes: JetStream refuses it, as it would a row while the bus is away.
    publisher.publish(runId, [{ ...one.direct[0], subject: `${namespace}.nowhere` }]);
    publisher.publish(runId, two.direct);
    await publisher.stop();
    expect(publisher.failed(runId)).toBe(true);
    expect(await seqsOnBus(runId)).toEqual([]);
    expect((await outboxOf(runId)).map((r) => r.published)).toEqual([false, false]);

    await relayPublishesAll(runId, "the relay to publish both rows after their grace");
    expect(await seqsOnBus(runId)).toEqual([1, 2]);
    publisher.release(runId);
    expect(publisher.failed(runId)).toBe(false);
  });

  it("given an earlier row of the run held for another writer, then the next writer's rows go by a relay after it, never directly before it", async () => {
    // A runner died (or its publish failed) with the run's first row held; the run is driven on by another writer
    // that believes it may publish directly (a JetStream redelivery that does not look like one, say).
    const runId = randomUUID();
    const dead = await appendRunEvents(pool, { runId, tenantId: "t", state: initialRunState, events: [queued()], namespace, publishDirect: true });
    expect(dead.direct).toHaveLength(1);
    const next = await appendRunEvents(pool, { runId, tenantId: "t", state: dead.state, events: [started(2)], namespace, publishDirect: true });
    expect(next.direct).toEqual([]);
    expect((await outboxOf(runId)).map((r) => r.held)).toEqual([true, false]);

    await relayPublishesAll(runId, "the relay to publish the held row, then the next");
    expect(await seqsOnBus(runId)).toEqual([1, 2]);
    // Every earlier row is out: the writer publishes directly again.
    const third = await appendRunEvents(pool, { runId, tenantId: "t", state: next.state, events: [started(3)], namespace, publishDirect: true });
    expect(third.direct).toHaveLength(1);
  });

  it("given the writer's own earlier rows still on their way, then its next rows go directly too, in order", async () => {
    const runId = randomUUID();
    const publisher = createDirectPublisher({ pool, nc, logger }, { markEveryMs: 600_000 });
    const one = await appendRunEvents(pool, { runId, tenantId: "t", state: initialRunState, events: [queued()], namespace, publishDirect: true });
    publisher.publish(runId, one.direct);
    expect(publisher.pendingOf(runId)).toEqual(one.direct.map((r) => r.id));
    const two = await appendRunEvents(pool, { runId, tenantId: "t", state: one.state, events: [started(2)], namespace, publishDirect: true, ownRows: publisher.pendingOf(runId) });
    expect(two.direct).toHaveLength(1);
    publisher.publish(runId, two.direct);
    await publisher.stop();
    expect(publisher.pendingOf(runId)).toEqual([]);
    expect(await seqsOnBus(runId)).toEqual([1, 2]);
    expect((await outboxOf(runId)).every((r) => r.published)).toBe(true);
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

  it("given several rows of one commit, then each is sent only once the one before it is acknowledged, and they reach the stream in their order", async () => {
    const runId = randomUUID();
    const appended = await appendRunEvents(pool, { runId, tenantId: "t", state: initialRunState, events: [queued(), started(2)], namespace, publishDirect: true });
    const { conn, sentAfterAcks } = countingConnection();
    const publisher = createDirectPublisher({ pool, nc: conn, logger });
    publisher.publish(runId, appended.direct);
    const later = await appendRunEvents(pool, { runId, tenantId: "t", state: appended.state, events: [started(3)], namespace, publishDirect: true, ownRows: publisher.pendingOf(runId) });
    publisher.publish(runId, later.direct);
    await publisher.stop();
    expect(sentAfterAcks).toEqual([0, 1, 2]);
    expect(await seqsOnBus(runId)).toEqual([1, 2, 3]);
    expect((await outboxOf(runId)).every((r) => r.published)).toBe(true);
  });

  it("given a commit's first row unanswered and the next one a stream would take, then the next one is never sent before it; the relay publishes both, in order", async () => {
    // As while the stream is between two leaders: nobody answers for the first row, and the stream takes what follows.
    const runId = randomUUID();
    const appended = await appendRunEvents(pool, { runId, tenantId: "t", state: initialRunState, events: [queued(), started(2)], namespace, publishDirect: true });
    const publisher = createDirectPublisher({ pool, nc, logger });
    publisher.publish(runId, [{ ...appended.direct[0], subject: `${namespace}.nowhere` }, appended.direct[1]]);
    await publisher.stop();
    expect(publisher.failed(runId)).toBe(true);
    expect(await seqsOnBus(runId)).toEqual([]);
    await relayPublishesAll(runId, "the relay to publish both rows after their grace");
    expect(await seqsOnBus(runId)).toEqual([1, 2]);
  });

  it("given a row of a commit refused, then the rows before it are marked, the run's later rows go by the relays, in order after their grace", async () => {
    const runId = randomUUID();
    const appended = await appendRunEvents(pool, { runId, tenantId: "t", state: initialRunState, events: [queued(), started(2)], namespace, publishDirect: true });
    const publisher = createDirectPublisher({ pool, nc, logger });
    publisher.publish(runId, [appended.direct[0], { ...appended.direct[1], subject: `${namespace}.nowhere` }]);
    const later = await appendRunEvents(pool, { runId, tenantId: "t", state: appended.state, events: [started(3)], namespace, publishDirect: true, ownRows: publisher.pendingOf(runId) });
    publisher.publish(runId, later.direct);
    await publisher.stop();
    expect(publisher.failed(runId)).toBe(true);
    expect(await seqsOnBus(runId)).toEqual([1]);
    expect((await outboxOf(runId)).map((r) => r.published)).toEqual([true, false, false]);
    await relayPublishesAll(runId, "the relay to publish the refused row and the one after it");
    expect(await seqsOnBus(runId)).toEqual([1, 2, 3]);
  });

  it("given rows without publishDirect, then nothing comes back and they wake the relays once per commit; rows a writer publishes wake nobody", async () => {
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    let notified = 0;
    listener.on("notification", () => notified++);
    await listener.query("LISTEN steward_outbox");
    try {
      await appendRunEvents(pool, { runId: randomUUID(), tenantId: "t", state: initialRunState, events: [queued()], namespace, publishDirect: true });
      const runId = randomUUID();
      const appended = await appendRunEvents(pool, { runId, tenantId: "t", state: initialRunState, events: [queued()], namespace });
      expect(appended.direct).toEqual([]);
      expect(await outboxOf(runId)).toEqual([{ subject: names.runEvent(runId, "run.queued"), published: false, held: false }]);
      await waitFor(() => (notified > 0 ? true : undefined), { timeoutMs: 5000, what: "the notification of the relays' row" });
      // Notifications come in commit order and before the answer to a later query: the first append sent none.
      await listener.query("SELECT 1");
      expect(notified).toBe(1);
      // Two rows for the relays in one commit (the copy and the command): one notification.
      const both = randomUUID();
      await appendRunEvents(pool, { runId: both, tenantId: "t", state: initialRunState, events: [queued()], commands: [command(both)], namespace });
      expect((await outboxOf(both)).map((r) => r.held)).toEqual([false, false]);
      await waitFor(() => (notified > 1 ? true : undefined), { timeoutMs: 5000, what: "the notification of the two rows" });
      await listener.query("SELECT 1");
      expect(notified).toBe(2);
    } finally {
      await listener.end();
    }
  });

  describe("a writer that publishes the run's command too (the gateway creating a run)", () => {
    const held = (runId: string) => appendRunEvents(pool, { runId, tenantId: "t", state: initialRunState, events: [queued()], commands: [command(runId)], namespace, publishDirect: true, directCommands: true });

    it("given directCommands, then the command comes back after the copy, held, naming its own id as published-through; on the bus in that order", async () => {
      const runId = randomUUID();
      const appended = await held(runId);
      expect(appended.direct.map((r) => r.subject)).toEqual([names.runEvent(runId, "run.queued"), names.runRequested]);
      const [copy, cmd] = appended.direct;
      expect(BigInt(cmd.id)).toBeGreaterThan(BigInt(copy.id));
      expect(cmd.headers).toMatchObject({ "Steward-Run-Id": runId, [PUBLISHED_THROUGH_HEADER]: String(cmd.id) });
      expect(copy.headers[PUBLISHED_THROUGH_HEADER]).toBeUndefined();
      // Stored without the hint: a relay publishing the row after its grace sends no claim it cannot vouch for.
      const stored = await pool.query("SELECT headers FROM outbox WHERE id = $1", [cmd.id]);
      expect(stored.rows[0].headers[PUBLISHED_THROUGH_HEADER]).toBeUndefined();
      expect((await outboxOf(runId)).map((r) => r.held)).toEqual([true, true]);

      const { conn, sentAfterAcks } = countingConnection();
      const publisher = createDirectPublisher({ pool, nc: conn, logger });
      publisher.publish(runId, appended.direct, { last: true });
      await publisher.stop();
      // One commit, but the command vouches for the copy: it is sent only once the copy is acknowledged.
      expect(sentAfterAcks).toEqual([0, 1]);
      expect((await outboxOf(runId)).map((r) => r.published)).toEqual([true, true]);
      const onBus = await jsm.streams.getMessage(names.commandStream, { last_by_subj: names.runRequested });
      expect(onBus?.header.get(PUBLISHED_THROUGH_HEADER)).toBe(String(cmd.id));
      expect(await seqsOnBus(runId)).toEqual([1]);
    });

    it("given the receiver's published-through, then rows up to it do not hold its own publishing; a row after it still does", async () => {
      const runId = randomUUID();
      const created = await held(runId);
      // Not yet marked published (the creator marks them later): without the hint the receiver goes by the relays.
      const without = await appendRunEvents(pool, { runId, tenantId: "t", state: created.state, events: [started(2)], namespace, publishDirect: true });
      expect(without.direct).toEqual([]);

      const other = randomUUID();
      const createdOther = await held(other);
      const hinted = await appendRunEvents(pool, { runId: other, tenantId: "t", state: createdOther.state, events: [started(2)], namespace, publishDirect: true, publishedThrough: String(createdOther.direct[1].id) });
      expect(hinted.direct.map((r) => r.subject)).toEqual([names.runEvent(other, "run.started")]);
      // A held row after the hint (here the writer's started, not passed as its own) still holds it.
      const below = await appendRunEvents(pool, { runId: other, tenantId: "t", state: hinted.state, events: [started(3)], namespace, publishDirect: true, publishedThrough: String(createdOther.direct[0].id) });
      expect(below.direct).toEqual([]);
    });

    it("given directCommands without publishDirect, or an earlier row held for another writer, then the command goes by the relays", async () => {
      const runId = randomUUID();
      const plain = await appendRunEvents(pool, { runId, tenantId: "t", state: initialRunState, events: [queued()], commands: [command(runId)], namespace, directCommands: true });
      expect(plain.direct).toEqual([]);
      expect((await outboxOf(runId)).map((r) => r.held)).toEqual([false, false]);

      const blocked = randomUUID();
      const first = await appendRunEvents(pool, { runId: blocked, tenantId: "t", state: initialRunState, events: [queued()], namespace, publishDirect: true });
      const next = await appendRunEvents(pool, { runId: blocked, tenantId: "t", state: first.state, events: [started(2)], commands: [command(blocked)], namespace, publishDirect: true, directCommands: true });
      expect(next.direct).toEqual([]);
      expect((await outboxOf(blocked)).map((r) => r.held)).toEqual([true, false, false]);
    });
  });
});

import { randomUUID } from "node:crypto";
import pg from "pg";
import { initialRunState } from "@steward/contract";
import { createLogger, type NatsConnection, type Pool } from "@steward/platform";
import { appendRunEvents } from "../runs/append-run-events";
import { createDirectPublisher } from "./direct-publisher";
import { useStoreAndBus } from "../../../../test/support/store-bus";
import { countingConnection, queuedEvent as queued, runBusProbes, startedEvent } from "../../../../test/support/run-bus";
import { waitFor } from "../../../../test/support/wait-for";

jest.setTimeout(60_000);

const logger = createLogger("direct-publisher-test", "silent");
const started = (seq: number) => startedEvent(`r${seq}`);

describe("a writer publishing its own events' copies after commit (real PostgreSQL and JetStream)", () => {
  const fx = useStoreAndBus("store_direct", { namespacePrefix: "dp" });
  const { names, namespace } = fx;
  const { command, onStream, seqsOnBus, commandsOnBus, runOf, commandsOf, allOut, newRelay, relayPublishesAll } = runBusProbes(fx);
  let pool: Pool, nc: NatsConnection;
  beforeAll(() => ({ pool, nc } = fx));
  it("given publishDirect, then the copies come back to publish and the run is kept from the relays; the run's command waits behind them", async () => {
    const runId = randomUUID();
    const appended = await appendRunEvents(pool, {
      runId,
      tenantId: "t",
      state: initialRunState,
      events: [queued()],
      commands: [command(runId)],
      namespace,
      publishDirect: true,
    });
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
    const appended = await appendRunEvents(pool, {
      runId,
      tenantId: "t",
      state: initialRunState,
      events: [queued(), started(2)],
      namespace,
      publishDirect: true,
    });
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
      await waitFor(async () => ((await runOf(runId)).published_version === 1 ? true : (await relay.drain(), undefined)), {
        timeoutMs: 10_000,
        intervalMs: 250,
        what,
      });
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
    const second = await appendRunEvents(pool, {
      runId: x,
      tenantId: "t",
      state: first.state,
      events: [started(2)],
      namespace,
      publishDirect: true,
      own: publisher.pendingOf(x),
    });
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
    const two = await appendRunEvents(pool, {
      runId,
      tenantId: "t",
      state: one.state,
      events: [started(2)],
      namespace,
      publishDirect: true,
      own: publisher.pendingOf(runId),
    });
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
    const two = await appendRunEvents(pool, {
      runId,
      tenantId: "t",
      state: one.state,
      events: [started(2)],
      namespace,
      publishDirect: true,
      own: publisher.pendingOf(runId),
    });
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
    const three = await appendRunEvents(pool, {
      runId,
      tenantId: "t",
      state: foreign.state,
      events: [started(3)],
      namespace,
      publishDirect: true,
      own: publisher.pendingOf(runId),
    });
    publisher.publish(runId, three.direct);
    await publisher.stop();
    await relayPublishesAll(runId, "the relay to publish the run's events");
    expect(await seqsOnBus(runId)).toEqual([1, 2, 3]);
    expect(three.direct).toEqual([]);
  });

  it("given several copies of one commit, then each is sent only once the one before it is acknowledged, and they reach the stream in their order", async () => {
    const runId = randomUUID();
    const appended = await appendRunEvents(pool, {
      runId,
      tenantId: "t",
      state: initialRunState,
      events: [queued(), started(2)],
      namespace,
      publishDirect: true,
    });
    const { conn, sentAfterAcks } = countingConnection(nc);
    const publisher = createDirectPublisher({ pool, nc: conn, logger });
    publisher.publish(runId, appended.direct);
    const later = await appendRunEvents(pool, {
      runId,
      tenantId: "t",
      state: appended.state,
      events: [started(3)],
      namespace,
      publishDirect: true,
      own: publisher.pendingOf(runId),
    });
    publisher.publish(runId, later.direct);
    await publisher.stop();
    expect(sentAfterAcks).toEqual([0, 1, 2]);
    expect(await seqsOnBus(runId)).toEqual([1, 2, 3]);
    expect(await runOf(runId)).toMatchObject({ version: 3, published_version: 3 });
  });

  it("given a commit's first copy unanswered and the next one a stream would take, then the next one is never sent before it; the relay publishes both, in order", async () => {
    // As while the stream is between two leaders: nobody answers for the first copy, and the stream takes what follows.
    const runId = randomUUID();
    const appended = await appendRunEvents(pool, {
      runId,
      tenantId: "t",
      state: initialRunState,
      events: [queued(), started(2)],
      namespace,
      publishDirect: true,
    });
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
    const appended = await appendRunEvents(pool, {
      runId,
      tenantId: "t",
      state: initialRunState,
      events: [queued(), started(2)],
      namespace,
      publishDirect: true,
    });
    const publisher = createDirectPublisher({ pool, nc, logger });
    publisher.publish(runId, [appended.direct[0], { ...appended.direct[1], subject: `${namespace}.nowhere` }]);
    const later = await appendRunEvents(pool, {
      runId,
      tenantId: "t",
      state: appended.state,
      events: [started(3)],
      namespace,
      publishDirect: true,
      own: publisher.pendingOf(runId),
    });
    publisher.publish(runId, later.direct);
    await publisher.stop();
    expect(publisher.failed(runId)).toBe(true);
    expect(await seqsOnBus(runId)).toEqual([1]);
    expect(await runOf(runId)).toEqual({ version: 3, published_version: 1, held: true });
    await relayPublishesAll(runId, "the relay to publish the refused event and the one after it");
    expect(await seqsOnBus(runId)).toEqual([1, 2, 3]);
  });

  it("given a run in hand, when its writer appends again, then that append marks the copies acknowledged before it; the rest are marked once the run is let go", async () => {
    const runId = randomUUID();
    const publisher = createDirectPublisher({ pool, nc, logger }, { markEveryMs: 600_000 });
    const one = await appendRunEvents(pool, { runId, tenantId: "t", state: initialRunState, events: [queued()], namespace, publishDirect: true });
    expect(publisher.carry(runId)).toBeNull(); // nothing acknowledged yet
    publisher.publish(runId, one.direct);
    const acked = await waitFor(() => publisher.carry(runId) ?? undefined, { timeoutMs: 10_000, what: "the copy's acknowledgement" });
    expect(acked).toBe(1);
    expect(await runOf(runId)).toMatchObject({ published_version: 0 });

    const two = await appendRunEvents(pool, {
      runId,
      tenantId: "t",
      state: one.state,
      events: [started(2)],
      namespace,
      publishDirect: true,
      own: publisher.pendingOf(runId),
      markOnBus: acked,
    });
    publisher.carried(runId, acked);
    expect(await runOf(runId)).toMatchObject({ version: 2, published_version: 1 });
    expect(publisher.pendingOf(runId)).toEqual({ fromVersion: null, throughVersion: null, commandIds: [] });
    expect(publisher.carry(runId)).toBeNull(); // taken along already

    publisher.publish(runId, two.direct);
    publisher.release(runId);
    await publisher.stop();
    expect(await seqsOnBus(runId)).toEqual([1, 2]);
    expect(await runOf(runId)).toMatchObject({ version: 2, published_version: 2 });
  });

  it("given a run in hand and one let go, when a mark is written, then it leaves the run in hand to its writer's next append and marks the other", async () => {
    const inHand = randomUUID();
    const letGo = randomUUID();
    // The second acknowledgement makes the mark be written at once; no timer comes before it.
    const publisher = createDirectPublisher({ pool, nc, logger }, { markEveryMs: 600_000, markBatch: 2, carryForMs: 600_000 });
    const a = await appendRunEvents(pool, { runId: inHand, tenantId: "t", state: initialRunState, events: [queued()], namespace, publishDirect: true });
    const b = await appendRunEvents(pool, { runId: letGo, tenantId: "t", state: initialRunState, events: [queued()], namespace, publishDirect: true });
    publisher.carry(inHand);
    publisher.publish(inHand, a.direct);
    publisher.publish(letGo, b.direct, { last: true });
    await waitFor(async () => ((await runOf(letGo)).published_version === 1 ? true : undefined), { timeoutMs: 10_000, what: "the mark of the run let go" });
    expect(await runOf(inHand)).toMatchObject({ published_version: 0 });
    expect(publisher.carry(inHand)).toBe(1);
    // Its writer is done with it: what it did not take along goes with the next mark.
    publisher.release(inHand);
    await publisher.stop();
    expect(await runOf(inHand)).toMatchObject({ published_version: 1 });
  });

  it("given a run in hand whose writer does not append again in time, then its acknowledged copies are marked by a mark of their own", async () => {
    const runId = randomUUID();
    const publisher = createDirectPublisher({ pool, nc, logger }, { markEveryMs: 20, carryForMs: 100 });
    try {
      const one = await appendRunEvents(pool, { runId, tenantId: "t", state: initialRunState, events: [queued(), started(2)], namespace, publishDirect: true });
      publisher.carry(runId);
      publisher.publish(runId, one.direct);
      await waitFor(async () => ((await runOf(runId)).published_version === 2 ? true : undefined), {
        timeoutMs: 10_000,
        what: "the run in hand marked without an append",
      });
      expect(publisher.pendingOf(runId)).toEqual({ fromVersion: null, throughVersion: null, commandIds: [] });
    } finally {
      await publisher.stop();
    }
  });

  it("given events without publishDirect, then nothing comes back and they wake the relays once per commit; events a writer publishes wake nobody", async () => {
    const listener = new pg.Client({ connectionString: fx.url });
    await listener.connect();
    let notified = 0;
    listener.on("notification", () => notified++);
    await listener.query("LISTEN steward_outbox");
    const direct = randomUUID();
    const plain = randomUUID();
    try {
      const own = await appendRunEvents(pool, { runId: direct, tenantId: "t", state: initialRunState, events: [queued()], namespace, publishDirect: true });
      const ownNext = await appendRunEvents(pool, {
        runId: direct,
        tenantId: "t",
        state: own.state,
        events: [started(2)],
        commands: [command(direct)],
        namespace,
        publishDirect: true,
        directCommands: true,
        own: { fromVersion: 1, throughVersion: 1, commandIds: [] },
      });
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
});

import { randomUUID } from "node:crypto";
import type { JetStreamManager } from "@nats-io/jetstream";
import { initialRunState } from "@steward/contract";
import { createLogger, type NatsConnection, type Pool } from "@steward/platform";
import { PUBLISHED_THROUGH_HEADER, appendRunEvents } from "../runs/append-run-events";
import { createDirectPublisher } from "./direct-publisher";
import { useStoreAndBus } from "../../../../test/support/store-bus";
import { countingConnection, queuedEvent as queued, runBusProbes, startedEvent } from "../../../../test/support/run-bus";
import { waitFor } from "../../../../test/support/wait-for";

jest.setTimeout(60_000);

const logger = createLogger("direct-commands-test", "silent");
const started = (seq: number) => startedEvent(`r${seq}`);

describe("a writer that publishes the run's command too, after its copies (the gateway creating a run; real PostgreSQL and JetStream)", () => {
  const fx = useStoreAndBus("store_direct_commands", { namespacePrefix: "dc" });
  const { names, namespace } = fx;
  const { command, seqsOnBus, commandsOnBus, runOf, commandsOf, allOut, relayPublishesAll } = runBusProbes(fx);
  let pool: Pool, nc: NatsConnection, jsm: JetStreamManager;
  beforeAll(() => ({ pool, nc, jsm } = fx));
  const held = (runId: string) =>
    appendRunEvents(pool, {
      runId,
      tenantId: "t",
      state: initialRunState,
      events: [queued()],
      commands: [command(runId)],
      namespace,
      publishDirect: true,
      directCommands: true,
    });

  it("given directCommands, then the command comes back after the copy, held, naming its own id as published-through; on the bus in that order", async () => {
    const runId = randomUUID();
    const appended = await held(runId);
    expect(appended.direct.map((r) => [r.subject, r.version])).toEqual([
      [names.runEvent(runId, "run.queued"), 1],
      [names.runRequested, undefined],
    ]);
    const [copy, cmd] = appended.direct;
    expect(copy.id).toBe(appended.events[0].metadata.event_id);
    expect(cmd.headers).toMatchObject({ "Steward-Run-Id": runId, [PUBLISHED_THROUGH_HEADER]: String(cmd.id) });
    expect(copy.headers[PUBLISHED_THROUGH_HEADER]).toBeUndefined();
    // Stored without the hint: a relay publishing the command after its grace sends no claim it cannot vouch for.
    const stored = await pool.query("SELECT headers FROM outbox WHERE id = $1", [cmd.id]);
    expect(stored.rows[0].headers[PUBLISHED_THROUGH_HEADER]).toBeUndefined();
    expect(await runOf(runId)).toEqual({ version: 1, published_version: 0, held: true });
    expect(await commandsOf(runId)).toEqual([{ published: false, held: true, after_version: 1 }]);

    const { conn, sentAfterAcks } = countingConnection(nc);
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
    const hinted = await appendRunEvents(pool, {
      runId: other,
      tenantId: "t",
      state: createdOther.state,
      events: [started(2)],
      commands: [command(other, 2)],
      namespace,
      publishDirect: true,
      directCommands: true,
      publishedThrough: through,
    });
    expect(hinted.direct.map((r) => r.subject)).toEqual([names.runEvent(other, "run.started"), names.runRequested]);
    // Its writer publishes the copy only: the run is on the bus through it, its command 2 still held.
    const publisher = createDirectPublisher({ pool, nc, logger });
    publisher.publish(other, hinted.direct.slice(0, 1));
    await publisher.stop();
    expect(await runOf(other)).toMatchObject({ version: 2, published_version: 2 });
    const after = await appendRunEvents(pool, {
      runId: other,
      tenantId: "t",
      state: hinted.state,
      events: [started(3)],
      namespace,
      publishDirect: true,
      publishedThrough: through,
    });
    expect(after.direct).toEqual([]);
    await creator.stop();
    await relayPublishesAll(runId, "the relay to publish the first run");
    await relayPublishesAll(other, "the relay to publish the held commands, then the rest");
    expect(await seqsOnBus(other)).toEqual([1, 2, 3]);
    expect(await commandsOnBus(other)).toEqual([1, 2]);
  });

  it("given directCommands without publishDirect, or an earlier command held for another writer, then the command goes by the relays, in order", async () => {
    const runId = randomUUID();
    const plain = await appendRunEvents(pool, {
      runId,
      tenantId: "t",
      state: initialRunState,
      events: [queued()],
      commands: [command(runId)],
      namespace,
      directCommands: true,
    });
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
    const next = await appendRunEvents(pool, {
      runId: blocked,
      tenantId: "t",
      state: first.state,
      events: [started(2)],
      commands: [command(blocked, 2)],
      namespace,
      publishDirect: true,
      directCommands: true,
    });
    expect(next.direct).toEqual([]);
    expect(await commandsOf(blocked)).toEqual([
      { published: false, held: true, after_version: 1 },
      { published: false, held: false, after_version: 2 },
    ]);
    await relayPublishesAll(runId, "the relay to publish the plain run");
    await relayPublishesAll(blocked, "the relay to publish the held command, then the next");
    expect(await seqsOnBus(blocked)).toEqual([1, 2]);
    expect(await commandsOnBus(blocked)).toEqual([1, 2]);
  });
});

import { randomUUID } from "node:crypto";
import { foldRun, initialRunState, type RunState } from "@steward/contract";
import { ConcurrencyError, createLogger } from "@steward/platform";
import { createDirectPublisher, type DirectPublisher } from "../outbox/direct-publisher";
import { appendRunEvents } from "./append-run-events";
import { PUBLISHED_THROUGH_HEADER } from "./append-answer";
import { createRunStreams } from "./run-streams";
import { useStoreAndBus } from "../../../../test/support/store-bus";
import { queuedEvent as queued, runBusProbes, startedEvent } from "../../../../test/support/run-bus";
import { waitFor } from "../../../../test/support/wait-for";

jest.setTimeout(60_000);

const logger = createLogger("run-streams-test", "silent");
const started = (seq: number) => startedEvent(`r${seq}`);

// The event store as a run's writer sees it: it reads and appends; whether its appends are published by the writer
// right after the commit or by the relays is decided behind it (docs/architecture.md, "Outbox relay").
describe("a run's stream: appends published behind it (real PostgreSQL and JetStream)", () => {
  const fx = useStoreAndBus("store_run_streams", { namespacePrefix: "rs" });
  const { names, namespace } = fx;
  const { command, seqsOnBus, commandsOnBus, runOf, commandsOf, relayPublishesAll } = runBusProbes(fx);
  const publishers: DirectPublisher[] = [];
  /** A publisher whose marks wait for the writer's next append (no mark of their own within the test). */
  const patientPublisher = () => {
    const publisher = createDirectPublisher({ pool: fx.pool, nc: fx.nc, logger }, { markEveryMs: 600_000, carryForMs: 600_000 });
    publishers.push(publisher);
    return publisher;
  };
  afterAll(async () => {
    for (const publisher of publishers) await publisher.stop();
  });

  /** A run queued and all out on the bus, as the gateway leaves it: its state. */
  async function queuedRun(runId: string): Promise<RunState> {
    const created = await appendRunEvents(fx.pool, { runId, tenantId: "t", state: initialRunState, events: [queued()], namespace });
    await relayPublishesAll(runId, "the relay to publish the run's first event");
    return created.state;
  }

  it("given a first delivery, when the writer appends, then it publishes the copies after the commit, held from the relays, and its next append marks them", async () => {
    const runId = randomUUID();
    const state = await queuedRun(runId);
    const publisher = patientPublisher();
    const stream = createRunStreams({ pool: fx.pool, namespace, publisher }).open({ runId, tenantId: "t", firstDelivery: true });
    expect((await stream.read()).map((e) => e.metadata.seq)).toEqual([1]);

    const first = await stream.append(state, [started(2)]);
    expect(first.events.map((e) => e.metadata.seq)).toEqual([2]);
    expect(await runOf(runId)).toMatchObject({ version: 2, published_version: 1, held: true });
    await waitFor(async () => ((await seqsOnBus(runId)).length === 2 ? true : undefined), { timeoutMs: 10_000, what: "the writer's copy on the bus" });
    await waitFor(() => ((publisher.carry(runId) ?? 0) >= 2 ? true : undefined), { timeoutMs: 10_000, what: "the copy acknowledged" });

    await stream.append(first.state, [started(3)]);
    expect(await runOf(runId)).toMatchObject({ version: 3, published_version: 2, held: true });
    stream.close();
    await publisher.stop();
    expect(await runOf(runId)).toMatchObject({ version: 3, published_version: 3 });
    expect(await seqsOnBus(runId)).toEqual([1, 2, 3]);
  });

  it("given a redelivery, then the writer's appends go by the relays", async () => {
    const runId = randomUUID();
    const state = await queuedRun(runId);
    const stream = createRunStreams({ pool: fx.pool, namespace, publisher: patientPublisher() }).open({ runId, tenantId: "t", firstDelivery: false });
    await stream.append(state, [started(2)]);
    stream.close();
    expect(await runOf(runId)).toMatchObject({ version: 2, held: false });
    await relayPublishesAll(runId, "the relay to publish the appended event");
    expect(await seqsOnBus(runId)).toEqual([1, 2]);
  });

  it("given another writer's append found by a read, then the writer's later appends go by the relays, after it", async () => {
    const runId = randomUUID();
    const state = await queuedRun(runId);
    const stream = createRunStreams({ pool: fx.pool, namespace, publisher: patientPublisher() }).open({ runId, tenantId: "t", firstDelivery: true });
    // The other writer (a cancel, the reaper) appends first: the writer's append meets the stream at another version.
    const other = await appendRunEvents(fx.pool, { runId, tenantId: "t", state, events: [started(2)], namespace });
    await expect(stream.append(state, [started(2)])).rejects.toThrow(ConcurrencyError);
    const read = await stream.read();
    expect(read.map((e) => e.metadata.seq)).toEqual([1, 2]);
    // Even with the other's event out, the writer cannot know whether the next one is: the relays keep the order.
    await relayPublishesAll(runId, "the relay to publish the other writer's event");

    await stream.append(other.state, [started(3)]);
    stream.close();
    expect(await runOf(runId)).toMatchObject({ version: 3, held: false });
    await relayPublishesAll(runId, "the relay to publish the writer's event");
    expect(await seqsOnBus(runId)).toEqual([1, 2, 3]);
  });

  it("given the decider's fold, then the projection is written from it, and it is what the store's fold would be", async () => {
    const runId = randomUUID();
    const state = await queuedRun(runId);
    const stream = createRunStreams({ pool: fx.pool, namespace }).open({ runId, tenantId: "t" });
    const folded = foldRun([started(2)], state);
    const appended = await stream.append(state, [started(2)], { folded });
    expect(appended.state).toBe(folded);
    expect(foldRun(await stream.read())).toEqual(folded);
    expect((await fx.pool.query("SELECT state, version FROM runs WHERE id = $1", [runId])).rows[0]).toEqual({ state: "running", version: 2 });
  });

  it("given a writer that hands the run over, then an append with a command is published by it, the command after the copy and vouching for it; one without goes by the relays", async () => {
    const runId = randomUUID();
    const state = await queuedRun(runId);
    const publisher = createDirectPublisher({ pool: fx.pool, nc: fx.nc, logger });
    publishers.push(publisher);
    const streams = createRunStreams({ pool: fx.pool, namespace, publisher: () => publisher, handsOver: true });

    const handed = streams.open({ runId, tenantId: "t" });
    const appended = await handed.append(state, [started(2)], { commands: [command(runId)] });
    handed.close();
    expect(await runOf(runId)).toMatchObject({ version: 2, held: true });
    expect(await commandsOf(runId)).toEqual([{ published: false, held: true, after_version: 2 }]);
    await waitFor(async () => ((await commandsOnBus(runId)).length === 1 ? true : undefined), { timeoutMs: 10_000, what: "the command on the bus" });
    expect(await seqsOnBus(runId)).toEqual([1, 2]);
    const sent = await fx.jsm.streams.getMessage(names.commandStream, { last_by_subj: names.runRequested });
    expect(sent?.header.get(PUBLISHED_THROUGH_HEADER)).toMatch(/^\d+$/);

    const cancel = streams.open({ runId, tenantId: "t" });
    await cancel.append(appended.state, [started(3)]);
    cancel.close();
    expect(await runOf(runId)).toMatchObject({ version: 3, held: false });
    await relayPublishesAll(runId, "the relay to publish the append without a command");
    expect(await seqsOnBus(runId)).toEqual([1, 2, 3]);
  });
});

import { randomUUID } from "node:crypto";
import type { JetStreamManager } from "@nats-io/jetstream";
import { busNames, initialRunState, type RunEvent, type RunState } from "@steward/contract";
import { createLogger, ensureStream, type NatsConnection, type Pool } from "@steward/platform";
import { appendRunEvents, type AppendRunEventsInput } from "../runs/append-run-events";
import { readBacklog } from "../status/backlog";
import { RELAYED_HEADER, createOutboxRelay, type OutboxRelay, type OutboxRelayOptions } from "./relay";
import { freshNamespace } from "../../../../test/support/databases";
import { useStoreAndBus } from "../../../../test/support/store-bus";
import { queuedEvent as queued, startedEvent as started } from "../../../../test/support/run-bus";
import { waitFor } from "../../../../test/support/wait-for";
import { readSubject } from "../../../../test/support/bus";

jest.setTimeout(120_000);

const NANOS_PER_MS = 1_000_000;
const logger = createLogger("relay-copies-test", "silent");
/** Long enough that only LISTEN/NOTIFY (or an explicit drain) can wake a relay during the test. */
const NO_SWEEP = { sweepMs: 10 * 60 * 1000 };
const TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

describe("a relay publishing the runs' events from the events table (real PostgreSQL and JetStream)", () => {
  const fx = useStoreAndBus("store_copies", { namespacePrefix: "rc", poolMax: 8 });
  const { names, namespace } = fx;
  let pool: Pool, nc: NatsConnection, jsm: JetStreamManager;
  beforeAll(() => ({ pool, nc, jsm } = fx));
  const states = new Map<string, RunState>();

  const command = (runId: string) => ({ subject: names.runRequested, msgId: `req-${runId}`, payload: { run_id: runId }, headers: { "Steward-Run-Id": runId } });

  /** Appends to the run after what this test appended to it before. */
  async function append(runId: string, events: RunEvent[], more: Partial<AppendRunEventsInput> = {}) {
    const appended = await appendRunEvents(pool, { runId, tenantId: "t", state: states.get(runId) ?? initialRunState, events, namespace, ...more });
    states.set(runId, appended.state);
    return appended;
  }

  function relay(options: OutboxRelayOptions = {}): OutboxRelay {
    const r = createOutboxRelay({ pool, nc, connectionString: fx.url, logger }, { ...NO_SWEEP, ...options });
    fx.atEnd(() => r.stop());
    return r;
  }

  const runRow = async (runId: string) =>
    (
      await pool.query<{ version: number; published_version: number; publish_attempts: number; held: boolean; retrying: boolean }>(
        `SELECT version, published_version, publish_attempts, coalesce(publish_held_until > clock_timestamp(), false) AS held,
                publish_retry_at IS NOT NULL AS retrying FROM runs WHERE id = $1`,
        [runId],
      )
    ).rows[0];
  const seqs = (messages: { headers: Record<string, string> }[]) => messages.map((m) => Number(m.headers["Steward-Seq"]));
  const onBus = (runId: string, stream = names.eventStream, ns = names) => readSubject(nc, stream, ns.runEvents(runId));

  /**
   * Every publish on `subject` as a core subscriber sees it, in the order the server took them: message ids (into
   * `seen`). Only on subjects a stream takes: a subscriber would be the only answer to a publish no stream takes.
   */
  async function watch(subject: string, seen: string[] = []): Promise<string[]> {
    const sub = nc.subscribe(subject, { callback: (_err, msg) => void seen.push(msg.headers?.get("Nats-Msg-Id") ?? "") });
    await nc.flush();
    fx.atEnd(async () => sub.unsubscribe());
    return seen;
  }

  it("given non-direct appends of several runs, when they wake a relay, then each run's events are on the bus in version order, as stored, and published_version reaches its version", async () => {
    const r = relay();
    await r.start();
    const runs = [randomUUID(), randomUUID(), randomUUID()];
    const stored = await Promise.all(
      runs.map(async (runId) => [
        ...(await append(runId, [queued(), started("r1")])).events,
        ...(await append(runId, [started("r2")], { traceparent: TRACEPARENT })).events,
        ...(await append(runId, [started("r3")])).events,
      ]),
    );
    // Woken by the appends' notifications alone: the sweep is minutes away.
    await waitFor(async () => ((await Promise.all(runs.map(runRow))).every((row) => row.published_version === 4) ? true : undefined), {
      timeoutMs: 20_000,
      what: "every run's events to be marked on the bus",
    });
    for (const [i, runId] of runs.entries()) {
      const messages = await onBus(runId);
      expect(seqs(messages)).toEqual([1, 2, 3, 4]);
      expect(messages.map((m) => m.headers["Nats-Msg-Id"])).toEqual(stored[i].map((e) => e.metadata.event_id));
      for (const [k, m] of messages.entries()) {
        const event = stored[i][k];
        expect(m.subject).toBe(names.runEvent(runId, event.type));
        expect(m.json).toEqual({ type: event.type, data: event.data, metadata: event.metadata });
        expect(m.headers).toMatchObject({ "Steward-Run-Id": runId, "Steward-Event-Type": event.type, "Steward-Seq": String(k + 1), [RELAYED_HEADER]: "true" });
        expect(m.headers.traceparent).toBe(k === 2 ? TRACEPARENT : undefined);
      }
    }
    expect(await r.drain()).toBe(0);
    await r.stop();
  });

  it("given a command written with events, then the relay publishes it after them", async () => {
    const runId = randomUUID();
    const seen = await watch(`${namespace}.agent.>`);
    const appended = await append(runId, [queued(), started("r")], { commands: [command(runId)] });
    const { rows } = await pool.query("SELECT after_version FROM outbox WHERE msg_id = $1", [`req-${runId}`]);
    expect(rows).toEqual([{ after_version: 2 }]);

    const r = relay();
    expect(await r.drain()).toBe(3);
    await waitFor(() => (seen.length >= 3 ? true : undefined), { timeoutMs: 5_000, what: "the core subscriber to see the three publishes" });
    expect(seen).toEqual([...appended.events.map((e) => e.metadata.event_id), `req-${runId}`]);
    expect(await runRow(runId)).toMatchObject({ version: 2, published_version: 2 });
    const marked = await pool.query("SELECT published_at IS NOT NULL AS published FROM outbox WHERE msg_id = $1", [`req-${runId}`]);
    expect(marked.rows).toEqual([{ published: true }]);
    await r.stop();
  });

  it("given a run held by a writer that never publishes, then the relay publishes other runs at once and it, with its command after, only after its grace, as its writer would have, marked relayed", async () => {
    const held = randomUUID();
    const other = randomUUID();
    const seen = await watch(`${namespace}.agent.>`);
    const direct = (await append(held, [queued()], { publishDirect: true, commands: [command(held)] })).direct;
    expect(direct.map((row) => row.version)).toEqual([1]);
    const otherEvents = (await append(other, [queued()])).events;

    const r = relay();
    expect(await r.drain()).toBe(1);
    expect(seqs(await onBus(other))).toEqual([1]);
    expect(await onBus(held)).toEqual([]);
    expect(await runRow(held)).toMatchObject({ published_version: 0, held: true });
    expect(await r.drain()).toBe(0);

    // The grace (2 s) is over.
    await pool.query("UPDATE runs SET publish_held_until = clock_timestamp() - interval '1 second' WHERE id = $1", [held]);
    expect(await r.drain()).toBe(2);
    const [copy] = await onBus(held);
    expect(copy.subject).toBe(direct[0].subject);
    expect(copy.json).toEqual(JSON.parse(direct[0].payload));
    // The writer's message, and the mark of the path that put it on the bus.
    expect(copy.headers).toEqual({ ...direct[0].headers, "Nats-Msg-Id": direct[0].msg_id, [RELAYED_HEADER]: "true" });
    await waitFor(() => (seen.length >= 3 ? true : undefined), { timeoutMs: 5_000, what: "the core subscriber to see the three publishes" });
    expect(seen).toEqual([otherEvents[0].metadata.event_id, direct[0].msg_id, `req-${held}`]);
    expect(await runRow(held)).toMatchObject({ published_version: 1, held: false });
    await r.stop();
  });

  it("given a copy NATS refuses, then its run waits behind it while it is retried; at the last attempt it is set aside in the outbox with its reason and the run's later events go on", async () => {
    // A namespace whose event stream takes messages up to 4 KiB.
    const ns = { namespace: freshNamespace("rcs") };
    const small = busNames(ns.namespace);
    await ensureStream(jsm, { name: small.eventStream, subjects: [small.allEvents], max_msg_size: 4096, duplicate_window: 2 * 60 * 1000 * NANOS_PER_MS });
    fx.atEnd(() => jsm.streams.delete(small.eventStream));
    const [poisoned, other] = [randomUUID(), randomUUID()];
    const events = (await append(poisoned, [queued(), started("x".repeat(8 * 1024)), started("r3")], ns)).events;
    await append(other, [queued()], ns);
    const r = relay({ maxAttempts: 3, retryBaseMs: 50 });

    expect(await r.drain()).toBe(2);
    expect(seqs(await onBus(poisoned, small.eventStream, small))).toEqual([1]);
    expect(seqs(await onBus(other, small.eventStream, small))).toEqual([1]);
    expect(await runRow(poisoned)).toMatchObject({ published_version: 1, publish_attempts: 1, retrying: true });

    await waitFor(async () => ((await runRow(poisoned)).published_version === 3 ? true : (await r.drain(), undefined)), {
      timeoutMs: 20_000,
      what: "the refused copy to be set aside and the run's last event published",
    });
    expect(seqs(await onBus(poisoned, small.eventStream, small))).toEqual([1, 3]);
    expect(await runRow(poisoned)).toMatchObject({ published_version: 3, publish_attempts: 0, retrying: false });
    const { rows } = await pool.query(
      `SELECT run_id, subject, headers->>'Steward-Seq' AS seq, attempts, last_error, set_aside_at IS NOT NULL AS set_aside, published_at IS NOT NULL AS published
         FROM outbox WHERE msg_id = $1`,
      [events[1].metadata.event_id],
    );
    expect(rows).toEqual([
      {
        run_id: poisoned,
        subject: small.runEvent(poisoned, "run.started"),
        seq: "2",
        attempts: 3,
        last_error: expect.stringMatching(/^JetStream refused it \(400, err_code \d+\): .*message size/i),
        set_aside: true,
        published: false,
      },
    ]);
    expect(await readBacklog(pool)).toMatchObject({ outboxSetAside: 1 });
    expect(await r.drain()).toBe(0);
    await r.stop();
  });

  it("given a copy no stream answers for, then its run waits, uncounted and never set aside, and goes in order once a stream takes it", async () => {
    const ns = { namespace: freshNamespace("rcu") };
    const later = busNames(ns.namespace);
    const runId = randomUUID();
    await append(runId, [queued(), started("r")], ns);
    const r = relay({ maxAttempts: 2, retryBaseMs: 50 });
    // Past the attempts a refusal would have.
    for (let i = 0; i < 3; i++) {
      expect(await r.drain()).toBe(0);
      await waitFor(
        async () => ((await pool.query("SELECT 1 FROM runs WHERE id = $1 AND publish_retry_at <= clock_timestamp()", [runId])).rowCount ? true : undefined),
        {
          timeoutMs: 5_000,
          what: "the unanswered copy to be due again",
        },
      );
    }
    expect(await runRow(runId)).toMatchObject({ published_version: 0, publish_attempts: 0 });
    expect((await pool.query("SELECT 1 FROM outbox WHERE run_id = $1", [runId])).rowCount).toBe(0);

    await ensureStream(jsm, { name: later.eventStream, subjects: [later.allEvents], duplicate_window: 2 * 60 * 1000 * NANOS_PER_MS });
    fx.atEnd(() => jsm.streams.delete(later.eventStream));
    expect(await r.drain()).toBe(2);
    expect(seqs(await onBus(runId, later.eventStream, later))).toEqual([1, 2]);
    expect(await runRow(runId)).toMatchObject({ published_version: 2, publish_attempts: 0, retrying: false });
    await r.stop();
  });

  it("given events no relay has published, then the relays' backlog counts them, held ones too, until they are on the bus", async () => {
    const before = (await readBacklog(pool)).outboxBacklog;
    const [a, b, held] = [randomUUID(), randomUUID(), randomUUID()];
    await append(a, [queued(), started("r")]);
    await append(b, [queued()]);
    await append(held, [queued()], { publishDirect: true });
    const during = await readBacklog(pool);
    expect(during.outboxBacklog).toBe(before + 4);
    expect(during.outboxOldestAgeSeconds).not.toBeNull();

    const r = relay();
    expect(await r.drain()).toBe(3);
    expect(await readBacklog(pool)).toMatchObject({ outboxBacklog: before + 1 });
    await pool.query("UPDATE runs SET publish_held_until = clock_timestamp() - interval '1 second' WHERE id = $1", [held]);
    expect(await r.drain()).toBe(1);
    expect(await readBacklog(pool)).toMatchObject({ outboxBacklog: before });
    await r.stop();
  });

  it("given a run's command no stream answered for, then the run's later events wait behind it, and follow it once a stream takes it", async () => {
    const runId = randomUUID();
    const seen = await watch(`${namespace}.agent.>`);
    const pending = { subject: `${namespace}.later.run.requested`, msgId: `later-${runId}`, payload: { run_id: runId }, headers: {} };
    const first = await append(runId, [queued()], { commands: [pending] });
    const second = await append(runId, [started("r")]);
    const r = relay({ retryBaseMs: 60_000 });
    expect(await r.drain()).toBe(1);
    // Drained again before the command is due: its run's later event stays behind it.
    expect(await r.drain()).toBe(0);
    expect(seqs(await onBus(runId))).toEqual([1]);
    expect(await runRow(runId)).toMatchObject({ published_version: 1 });

    const stream = `${namespace.toUpperCase()}_LATER`;
    await ensureStream(jsm, { name: stream, subjects: [`${namespace}.later.>`], duplicate_window: 2 * 60 * 1000 * NANOS_PER_MS });
    fx.atEnd(() => jsm.streams.delete(stream));
    await watch(`${namespace}.later.>`, seen);
    await pool.query("UPDATE outbox SET retry_at = clock_timestamp() WHERE msg_id = $1", [pending.msgId]);
    expect(await r.drain()).toBe(2);
    await waitFor(() => (seen.length >= 3 ? true : undefined), { timeoutMs: 5_000, what: "the core subscriber to see the publishes" });
    expect(seen).toEqual([first.events[0].metadata.event_id, pending.msgId, second.events[0].metadata.event_id]);
    await r.stop();
  });
  it("given a run that ended, when its last event is on the bus, then it is settled and the relays look at it no more; an open run is not", async () => {
    const ended = randomUUID();
    const open = randomUUID();
    await append(ended, [queued(), started("r1")]);
    await append(ended, [{ type: "run.succeeded", data: { output: { text: "done", evidence: [] }, finished_at: "2026-12-01T10:00:02.000000Z" } }]);
    await append(open, [queued(), started("r1")]);
    const settled = async (runId: string) =>
      (await pool.query<{ bus_settled: boolean }>("SELECT bus_settled FROM runs WHERE id = $1", [runId])).rows[0].bus_settled;
    expect([await settled(ended), await settled(open)]).toEqual([false, false]);
    await relay().drain();
    expect(await runRow(ended)).toMatchObject({ version: 3, published_version: 3 });
    expect([await settled(ended), await settled(open)]).toEqual([true, false]);
    const unsettled = await pool.query<{ id: string }>("SELECT id FROM runs WHERE NOT bus_settled");
    expect(unsettled.rows.map((r) => r.id)).toContain(open);
    expect(unsettled.rows.map((r) => r.id)).not.toContain(ended);
  });
});

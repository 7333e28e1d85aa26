import { randomUUID } from "node:crypto";
import { initialRunState, type RunEvent, type RunState } from "@steward/contract";
import { ConcurrencyError, inTransaction, type Pool } from "@steward/platform";
import { appendRunEvents, type AppendRunEventsInput } from "./append-run-events";
import { appendRuns, createRunAppender } from "./append-runs";
import { EventTooLargeError } from "../event-store/event-size";
import { readStream } from "../event-store/read-stream";
import { useFreshDatabase } from "../../../../test/support/databases";
import { statementLog } from "../../../../test/support/statement-log";
import { queuedEvent, startedEvent } from "../../../../test/support/run-bus";
import { untilAnEventInsertWaits } from "../../../../test/support/lock-waits";
import { queuedWithLongInput, runsToastChunks } from "../../../../test/support/stored-inputs";

const NAMESPACE = "aruns";

const thought = (stepNo: number, text = `step ${stepNo}`): RunEvent => ({
  type: "thought",
  data: { step_no: stepNo, text, tool_calls: [], usage: { input_tokens: 1, output_tokens: 1 }, provider: "scripted" },
});

describe("appendRuns (PostgreSQL: the appends of several runs in one statement, each run's version checked apart)", () => {
  const db = useFreshDatabase("steward_store_append_runs", 10);

  const input = (runId: string, state: RunState, events: RunEvent[], more: Partial<AppendRunEventsInput> = {}): AppendRunEventsInput => ({
    runId,
    tenantId: "acme",
    namespace: NAMESPACE,
    state,
    events,
    ...more,
  });

  /** A run with `queued` and `started` stored: its state at version 2. */
  async function startedRun(): Promise<{ runId: string; state: RunState }> {
    const runId = randomUUID();
    const { state } = await appendRunEvents(db.pool, input(runId, initialRunState, [queuedEvent(), startedEvent("r1")]));
    return { runId, state };
  }

  /** What a run's appends wrote, without what differs between two runs (ids, times): to compare two runs' writes. */
  async function written(runId: string) {
    const events = (await readStream(db.pool, runId)).map((e) => ({ type: e.type, data: e.data, seq: e.metadata.seq, traceparent: e.metadata.traceparent }));
    const { rows } = await db.pool.query(
      `SELECT state, version, usage, created_by, input, mode, created_at, started_at, finished_at, deadline_at, output, error,
              awaiting_since, published_version, bus_settled, lease_owner, replace(events_subject, id::text, '') AS subject,
              publish_held_until IS NOT NULL AS held
         FROM runs WHERE id = $1`,
      [runId],
    );
    return { events, run: rows[0] ?? null };
  }

  it("writes each run's events and projection as its own append would, in one statement for all", async () => {
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const alone = await Promise.all([startedRun(), startedRun(), startedRun()]);
    const together = await Promise.all([startedRun(), startedRun(), startedRun()]);
    const appends = (runs: typeof alone) => [
      input(runs[0].runId, runs[0].state, [thought(1), thought(2)], { traceparent }),
      input(runs[1].runId, runs[1].state, [thought(1)]),
      input(runs[2].runId, runs[2].state, [
        thought(1),
        { type: "run.succeeded", data: { output: { text: "done", evidence: [] }, finished_at: "2026-12-01T10:00:02.000000Z" } },
      ]),
    ];
    const single = [];
    for (const a of appends(alone)) single.push(await appendRunEvents(db.pool, a));
    const { pool, sent } = statementLog(db.pool);
    const outcomes = await appendRuns(pool, appends(together));

    expect(sent).toHaveLength(1);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled", "fulfilled"]);
    for (let i = 0; i < 3; i++) {
      const value = (outcomes[i] as PromiseFulfilledResult<(typeof single)[number]>).value;
      // What each caller gets back is what was stored, and what the single append answers for its twin.
      expect(value.events).toEqual((await readStream(db.pool, together[i].runId)).slice(2));
      expect(value.state).toEqual(single[i].state);
      expect(value.direct).toEqual([]);
      expect(await written(together[i].runId)).toEqual(await written(alone[i].runId));
    }
    expect((await written(together[2].runId)).run).toMatchObject({ state: "succeeded", version: 4 });
  });

  it("leaves what only run.queued sets as each row has it: a long input is not written again", async () => {
    const runId = randomUUID();
    const created = await appendRunEvents(db.pool, input(runId, initialRunState, [queuedWithLongInput(), startedEvent("r1")]));
    const chunks = await runsToastChunks(db.pool);
    expect(chunks.length).toBeGreaterThan(0); // the input is out of the row
    const other = await startedRun();

    const outcomes = await appendRuns(db.pool, [input(runId, created.state, [thought(1)]), input(other.runId, other.state, [thought(1)])]);

    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled"]);
    expect(await runsToastChunks(db.pool)).toEqual(chunks);
    expect((await written(runId)).run).toMatchObject({ input: created.state.input, version: 3 });
  });

  it("refuses only the append whose run moved (stale, lower or higher version) and writes the others", async () => {
    const runs = await Promise.all([startedRun(), startedRun(), startedRun(), startedRun()]);
    const before = await Promise.all(runs.map((r) => written(r.runId)));
    const versions = [2, 1, 5, 2];
    const { pool, sent } = statementLog(db.pool);
    const outcomes = await appendRuns(
      pool,
      runs.map((r, i) => input(r.runId, { ...r.state, version: versions[i] }, [thought(1, `to ${i}`)])),
    );

    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "rejected", "fulfilled"]);
    // Found by the statement's own version check, not by the constraint that makes each append go again alone.
    expect(sent).toHaveLength(1);
    for (const i of [1, 2]) {
      const reason = (outcomes[i] as PromiseRejectedResult).reason;
      expect(reason).toBeInstanceOf(ConcurrencyError);
      expect(reason).toMatchObject({ streamId: runs[i].runId, expectedVersion: versions[i] });
      expect(await written(runs[i].runId)).toEqual(before[i]);
    }
    for (const i of [0, 3]) expect((await written(runs[i].runId)).events.map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it("marks each run on the bus through what its writer took along, in the one statement, never lowering a mark; a refused run's append marks nothing", async () => {
    const runs = await Promise.all([startedRun(), startedRun(), startedRun(), startedRun()]);
    // A relay marked the third further already.
    await db.pool.query("UPDATE runs SET published_version = 2 WHERE id = $1", [runs[2].runId]);
    const { pool, sent } = statementLog(db.pool);
    const outcomes = await appendRuns(pool, [
      input(runs[0].runId, runs[0].state, [thought(1)], { markOnBus: 2 }),
      input(runs[1].runId, runs[1].state, [thought(1)]),
      input(runs[2].runId, runs[2].state, [thought(1)], { markOnBus: 1 }),
      input(runs[3].runId, { ...runs[3].state, version: 1 }, [thought(1)], { markOnBus: 2 }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled", "fulfilled", "rejected"]);
    expect(sent).toHaveLength(1);
    const marks = await Promise.all(runs.map(async (r) => (await written(r.runId)).run.published_version));
    expect(marks).toEqual([2, 0, 2, 0]);
  });

  it("lets the writer publish a run's copies itself only where that run's earlier events and commands are out or its own", async () => {
    const [out, behind] = await Promise.all([startedRun(), startedRun()]);
    // A run with a command not yet on the bus, held for another writer, and one whose command is this writer's.
    const withCommand = async () => {
      const { runId, state } = await startedRun();
      const command = { subject: `${NAMESPACE}.test.command`, msgId: `${runId}:go`, payload: { run_id: runId }, headers: {} };
      const { state: now } = await appendRunEvents(db.pool, input(runId, state, [thought(1)], { commands: [command] }));
      const { rows } = await db.pool.query<{ id: string }>("SELECT id::text FROM outbox WHERE run_id = $1", [runId]);
      return { runId, state: now, commandId: rows[0].id };
    };
    const [held, own] = [await withCommand(), await withCommand()];
    // Every run's events so far are on the bus (as a mark or a relay records it), except the second run's.
    await db.pool.query("UPDATE runs SET published_version = version WHERE id = ANY($1::uuid[])", [[out.runId, held.runId, own.runId]]);
    const outcomes = await appendRuns(db.pool, [
      input(out.runId, out.state, [thought(1), thought(2)], { publishDirect: true }),
      input(behind.runId, behind.state, [thought(1)], { publishDirect: true }),
      input(held.runId, held.state, [thought(2)], { publishDirect: true }),
      input(own.runId, own.state, [thought(2)], { publishDirect: true, own: { fromVersion: null, throughVersion: null, commandIds: [own.commandId] } }),
    ]);
    const [direct, behindRun, heldRun, ownRun] = outcomes.map(
      (o) => (o as PromiseFulfilledResult<{ direct: readonly { version?: number; msg_id: string }[] }>).value,
    );

    expect(direct.direct.map((c) => c.version)).toEqual([3, 4]);
    expect(direct.direct.map((c) => c.msg_id)).toEqual((await readStream(db.pool, out.runId)).slice(2).map((e) => e.metadata.event_id));
    expect((await written(out.runId)).run).toMatchObject({ published_version: 2, held: true, bus_settled: false });
    expect(behindRun.direct).toEqual([]);
    expect((await written(behind.runId)).run).toMatchObject({ published_version: 0, held: false });
    expect(heldRun.direct).toEqual([]);
    expect((await written(held.runId)).run).toMatchObject({ held: false });
    expect(ownRun.direct.map((c) => c.version)).toEqual([4]);
    expect((await written(own.runId)).run).toMatchObject({ held: true });
  });

  it("writes each append again alone when a racing appender took a run's version, so that only that run's append fails", async () => {
    const [raced, other] = await Promise.all([startedRun(), startedRun()]);
    let batch: Promise<Awaited<ReturnType<typeof appendRuns>>> | undefined;
    // The racing append runs in a transaction held open until the statement waits on its uncommitted event.
    await inTransaction(db.pool, async (client) => {
      await appendRunEvents(client as unknown as Pool, input(raced.runId, raced.state, [thought(1, "racer")]));
      batch = appendRuns(db.pool, [input(other.runId, other.state, [thought(1, "other")]), input(raced.runId, raced.state, [thought(1, "batched")])]);
      batch.catch(() => undefined);
      await untilAnEventInsertWaits(db.pool, "the statement to wait on the racer's event");
    });
    const [first, second] = await batch!;

    expect(first.status).toBe("fulfilled");
    expect(second.status).toBe("rejected");
    expect((second as PromiseRejectedResult).reason).toBeInstanceOf(ConcurrencyError);
    expect((await readStream(db.pool, raced.runId)).map((e) => (e.data as { text?: string }).text)).toEqual([undefined, undefined, "racer"]);
    expect((await readStream(db.pool, other.runId)).map((e) => (e.data as { text?: string }).text)).toEqual([undefined, undefined, "other"]);
  });

  it("fails an event over the size limit alone, and writes two appends of one run one after the other", async () => {
    const [big, twice] = await Promise.all([startedRun(), startedRun()]);
    const { pool, sent } = statementLog(db.pool);
    const outcomes = await appendRuns(pool, [
      input(big.runId, big.state, [thought(1, "x".repeat(2 * 1024 * 1024))]),
      input(twice.runId, twice.state, [thought(1, "first")]),
      input(twice.runId, twice.state, [thought(1, "second")]),
    ]);

    expect((outcomes[0] as PromiseRejectedResult).reason).toBeInstanceOf(EventTooLargeError);
    expect(outcomes[1].status).toBe("fulfilled");
    // The second was written after the first, at the version it expected: the run had moved.
    expect((outcomes[2] as PromiseRejectedResult).reason).toBeInstanceOf(ConcurrencyError);
    expect(sent).toHaveLength(2);
    expect((await readStream(db.pool, big.runId)).length).toBe(2);
    expect((await readStream(db.pool, twice.runId)).map((e) => (e.data as { text?: string }).text)).toEqual([undefined, undefined, "first"]);
  });
});

describe("createRunAppender (PostgreSQL)", () => {
  const db = useFreshDatabase("steward_store_run_appender", 4);

  it("writes the appends submitted while a statement is in flight together in the next one, and answers each caller", async () => {
    let statements = 0;
    const pool = new Proxy(db.pool, {
      get: (target, prop, receiver) =>
        prop === "query"
          ? (...args: unknown[]) => (statements++, (target.query as (...a: unknown[]) => unknown)(...args))
          : Reflect.get(target, prop, receiver),
    });
    const appender = createRunAppender(pool, { maxInFlight: 1 });
    const runs = Array.from({ length: 9 }, () => randomUUID());
    const lone = await appender.append({ runId: runs[0], tenantId: "acme", namespace: NAMESPACE, state: initialRunState, events: [queuedEvent()] });
    expect(lone.state.version).toBe(1);
    expect(statements).toBe(1);

    // Those submitted in one turn share one statement.
    const results = await Promise.all(
      runs
        .slice(1)
        .map((runId) => appender.append({ runId, tenantId: "acme", namespace: NAMESPACE, state: initialRunState, events: [queuedEvent(), startedEvent("r")] })),
    );
    expect(statements).toBe(2);
    expect(results.map((r) => r.events.map((e) => e.metadata.seq))).toEqual(runs.slice(1).map(() => [1, 2]));
    const { rows } = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE id = ANY($1::uuid[]) AND state = 'running'", [
      runs.slice(1),
    ]);
    expect(rows[0].n).toBe(8);
  });
});

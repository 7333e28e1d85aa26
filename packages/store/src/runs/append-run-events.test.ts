import { randomUUID } from "node:crypto";
import { addSeconds, busNames, initialRunState, nowMicros, type RunEvent, type RunState } from "@steward/contract";
import { ConcurrencyError, inTransaction, type Pool } from "@steward/platform";
import { appendRunEvents, type AppendRunEventsInput } from "./append-run-events";
import type { OutboxMessage } from "../outbox/enqueue";
import { readStream } from "../event-store/read-stream";
import { useFreshDatabase } from "../../../../test/support/databases";
import { untilAnEventInsertWaits } from "../../../../test/support/lock-waits";
import { queuedWithLongInput, runsToastChunks } from "../../../../test/support/stored-inputs";

const NAMESPACE = "arev";
const names = busNames(NAMESPACE);

function queued(createdBy = "u1"): RunEvent {
  const createdAt = nowMicros();
  return {
    type: "run.queued",
    data: {
      input: "hello",
      mode: "agent",
      response_language: null,
      created_by: createdBy,
      created_at: createdAt,
      deadline_at: addSeconds(createdAt, 180),
      thread_id: null,
    },
  };
}

const started = (runner = "r1"): RunEvent => ({ type: "run.started", data: { runner_id: runner, started_at: nowMicros() } });

function thought(stepNo: number, text = `step ${stepNo}`): RunEvent {
  return { type: "thought", data: { step_no: stepNo, text, tool_calls: [], usage: { input_tokens: 1, output_tokens: 1 }, provider: "scripted" } };
}

function command(runId: string, label: string): OutboxMessage {
  return { subject: `${NAMESPACE}.test.command.${label}`, msgId: `${runId}:${label}`, payload: { run_id: runId, label }, headers: { "Steward-Test": label } };
}

describe("appendRunEvents (PostgreSQL: events, outbox and projection in one statement)", () => {
  const db = useFreshDatabase("steward_store_append", 10);

  const append = (runId: string, state: RunState, events: RunEvent[], more: Partial<AppendRunEventsInput> = {}) =>
    appendRunEvents(db.pool, { runId, tenantId: "acme", namespace: NAMESPACE, state, events, ...more });

  /** A run with `queued` and `started` stored: its state at version 2. */
  async function startedRun(): Promise<{ runId: string; state: RunState }> {
    const runId = randomUUID();
    const { state } = await append(runId, initialRunState, [queued(), started()]);
    return { runId, state };
  }

  /** Everything a run's appends wrote: its events, its commands in the outbox, its projection row and where it stands on the bus. */
  async function footprint(runId: string) {
    const events = await readStream(db.pool, runId);
    const { rows: outbox } = await db.pool.query<{ subject: string; msg_id: string; payload: string; headers: Record<string, string>; after_version: number }>(
      "SELECT subject, msg_id, payload, headers, after_version FROM outbox WHERE subject LIKE '%' || $1 || '%' OR msg_id LIKE $1 || ':%' ORDER BY id",
      [runId],
    );
    const { rows: runs } = await db.pool.query<{ state: string; version: number; created_by: string; usage: { model_calls: number } }>(
      "SELECT state, version, created_by, usage FROM runs WHERE id = $1",
      [runId],
    );
    const { rows: bus } = await db.pool.query<{ events_subject: string; published_version: number; held: boolean }>(
      "SELECT events_subject, published_version, publish_held_until IS NOT NULL AS held FROM runs WHERE id = $1",
      [runId],
    );
    return { events, outbox, run: runs[0] ?? null, bus: bus[0] ?? null };
  }

  const totals = async () => {
    const { rows } = await db.pool.query<{ events: number; outbox: number; runs: number }>(
      "SELECT (SELECT count(*) FROM events)::int AS events, (SELECT count(*) FROM outbox)::int AS outbox, (SELECT count(*) FROM runs)::int AS runs",
    );
    return rows[0];
  };

  it("stores several events, the commands and the projection together, numbered from the expected version; the copies are built from the events", async () => {
    const runId = randomUUID();
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const first = await append(runId, initialRunState, [queued(), started(), thought(1)], { traceparent, commands: [command(runId, "go")] });

    expect(first.events.map((e) => e.metadata.seq)).toEqual([1, 2, 3]);
    expect(first.state).toMatchObject({ status: "running", version: 3, step_no: 1 });
    for (const e of first.events) {
      expect(e.metadata).toMatchObject({ run_id: runId, tenant_id: "acme", traceparent });
      expect(e.metadata.event_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(e.metadata.recorded_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    }
    expect(new Set(first.events.map((e) => e.metadata.event_id)).size).toBe(3);

    const after = await footprint(runId);
    // What was returned is what was stored.
    expect(after.events).toEqual(first.events);
    expect(after.run).toMatchObject({ state: "running", version: 3, created_by: "u1", usage: { model_calls: 1 } });
    // No copy is written twice: the run's row says where its events stand on the bus (none out yet, no writer
    // holding them), and the command is in the outbox after the version it was written with.
    expect(after.outbox).toEqual([
      {
        subject: `${NAMESPACE}.test.command.go`,
        msg_id: `${runId}:go`,
        payload: JSON.stringify({ run_id: runId, label: "go" }),
        headers: { "Steward-Test": "go" },
        after_version: 3,
      },
    ]);
    expect(after.bus).toEqual({ events_subject: names.runEvent(runId, ""), published_version: 0, held: false });

    // A second append at the current version continues the numbering; without a traceparent, none is stored.
    // Published by its writer, the copies come back: each is the stored event, its subject and headers name it.
    const more = await append(runId, first.state, [thought(2), thought(3)], { publishDirect: true });
    expect(more.events.map((e) => e.metadata.seq)).toEqual([4, 5]);
    expect(more.events.every((e) => !("traceparent" in e.metadata))).toBe(true);
    const later = await footprint(runId);
    expect(later.events.map((e) => e.metadata.seq)).toEqual([1, 2, 3, 4, 5]);
    // Not direct: events 1–3 are not known to be on the bus, so the relays publish these after them.
    expect(more.direct).toEqual([]);
    expect(later.bus).toEqual({ events_subject: names.runEvent(runId, ""), published_version: 0, held: false });
    // Once they and the command are on the bus (as a relay marks them), the writer's next copies are its own.
    await db.pool.query("UPDATE runs SET published_version = 5 WHERE id = $1", [runId]);
    await db.pool.query("UPDATE outbox SET published_at = now() WHERE msg_id = $1", [`${runId}:go`]);
    const direct = await append(runId, more.state, [thought(4)], { traceparent, publishDirect: true });
    expect(direct.direct).toHaveLength(1);
    const [copy] = direct.direct;
    expect(copy).toMatchObject({ subject: names.runEvent(runId, "thought"), msg_id: direct.events[0].metadata.event_id, version: 6 });
    expect(JSON.parse(copy.payload)).toEqual((await footprint(runId)).events[5]);
    expect(copy.headers).toEqual({ "Steward-Run-Id": runId, "Steward-Event-Type": "thought", "Steward-Seq": "6", traceparent });
    expect((await footprint(runId)).bus).toEqual({ events_subject: names.runEvent(runId, ""), published_version: 5, held: true });
    expect(later.outbox).toHaveLength(1);
    expect(later.run).toMatchObject({ version: 5, usage: { model_calls: 3 } });
  });

  it("changes no indexed column of an open run's row, so that its appends and the marks of its copies stay HOT updates", async () => {
    // PostgreSQL updates a row in place, touching none of the table's indexes, only when no column an index names
    // (in its keys, expressions or predicate) changes. These change on every append or mark of an open run.
    const everyStep = ["version", "usage", "published_version", "publish_held_until", "publish_retry_at", "publish_attempts"];
    const { rows } = await db.pool.query<{ def: string }>("SELECT pg_get_indexdef(indexrelid) AS def FROM pg_index WHERE indrelid = 'runs'::regclass");
    expect(rows.length).toBeGreaterThan(5);
    const naming = rows.filter((r) => everyStep.some((column) => new RegExp(`\\b${column}\\b`).test(r.def.replace(/^.* USING /, ""))));
    expect(naming.map((r) => r.def)).toEqual([]);
  });

  it("leaves what only run.queued sets as the row has it: a long input is not written again with each later append", async () => {
    const runId = randomUUID();
    const created = await append(runId, initialRunState, [queuedWithLongInput(), started()]);
    const chunks = await runsToastChunks(db.pool);
    expect(chunks.length).toBeGreaterThan(0); // the input is out of the row

    let state = created.state;
    for (const events of [
      [thought(1)],
      [thought(2)],
      [{ type: "run.succeeded", data: { output: { text: "done", evidence: [] }, finished_at: nowMicros() } } as RunEvent],
    ]) {
      state = (await append(runId, state, events)).state;
    }

    expect(await runsToastChunks(db.pool)).toEqual(chunks);
    const { rows } = await db.pool.query<{ input: string; state: string; version: number }>("SELECT input, state, version FROM runs WHERE id = $1", [runId]);
    expect(rows[0]).toEqual({ input: state.input, state: "succeeded", version: 5 });
  });

  it("marks the run on the bus through what its writer took along (markOnBus), never lowering the mark; a refused append marks nothing", async () => {
    const { runId, state } = await startedRun();
    const published = async () => (await footprint(runId)).bus!.published_version;
    expect(await published()).toBe(0);

    const stale = append(runId, { ...state, version: 1 }, [thought(1)], { markOnBus: 2 });
    await expect(stale).rejects.toBeInstanceOf(ConcurrencyError);
    expect(await published()).toBe(0);

    const one = await append(runId, state, [thought(1)], { markOnBus: 2 });
    expect(await published()).toBe(2);
    // A relay marked further meanwhile: a writer's older acknowledgement leaves its mark.
    await db.pool.query("UPDATE runs SET published_version = 3 WHERE id = $1", [runId]);
    const two = await append(runId, one.state, [thought(2)], { markOnBus: 2 });
    expect(await published()).toBe(3);
    await append(runId, two.state, [thought(3)]);
    expect(await published()).toBe(3);
    expect(await footprint(runId)).toMatchObject({ run: { version: 5 }, bus: { published_version: 3 } });
  });

  it("refuses a stale, a lower or a higher expected version with ConcurrencyError and writes nothing of that append", async () => {
    const { runId, state } = await startedRun();
    const before = await footprint(runId);
    const totalsBefore = await totals();

    for (const version of [0, 1, 5]) {
      const attempt = append(runId, { ...state, version }, [thought(1)], { commands: [command(runId, `stale${version}`)] });
      await expect(attempt).rejects.toBeInstanceOf(ConcurrencyError);
      await expect(attempt).rejects.toMatchObject({ streamId: runId, expectedVersion: version });
    }
    // A stream that does not exist yet is at version 0, not at 1.
    const fresh = randomUUID();
    await expect(append(fresh, { ...initialRunState, version: 1 }, [queued()])).rejects.toBeInstanceOf(ConcurrencyError);

    expect(await footprint(runId)).toEqual(before);
    expect(await footprint(fresh)).toEqual({ events: [], outbox: [], run: null, bus: null });
    expect(await totals()).toEqual(totalsBefore);
  });

  it("writes nothing when the projection violates a constraint after the events were inserted (one statement, rolled back)", async () => {
    // A thought on a stream with no run.queued folds to a run without created_at: the runs row is refused
    // (NOT NULL), after the events and their copies were inserted by the same statement.
    const runId = randomUUID();
    const totalsBefore = await totals();
    await expect(append(runId, initialRunState, [thought(1), thought(2)], { commands: [command(runId, "orphan")] })).rejects.toMatchObject({ code: "23502" });
    expect(await footprint(runId)).toEqual({ events: [], outbox: [], run: null, bus: null });
    expect(await totals()).toEqual(totalsBefore);
  });

  it("writes nothing when a command of the append collides with an outbox row (the events and the projection go back too)", async () => {
    const { runId, state } = await startedRun();
    const { state: now } = await append(runId, state, [thought(1)], { commands: [command(runId, "once")] });
    const before = await footprint(runId);
    const totalsBefore = await totals();

    // The same message id again (a command rebuilt by mistake): the outbox's unique msg_id refuses it.
    const attempt = append(runId, now, [thought(2), thought(3)], { commands: [command(runId, "fresh"), command(runId, "once")] });
    await expect(attempt).rejects.toMatchObject({ code: "23505", constraint: "outbox_msg_id_key" });
    await expect(attempt).rejects.not.toBeInstanceOf(ConcurrencyError);

    expect(await footprint(runId)).toEqual(before);
    expect(await totals()).toEqual(totalsBefore);
    // The stream was left exactly where it was: the same append at the same version goes through afterwards.
    const retried = await append(runId, now, [thought(2)], { commands: [command(runId, "fresh")] });
    expect(retried.events.map((e) => e.metadata.seq)).toEqual([4]);
  });

  it("lets exactly one of two concurrent appends at the same expected version win; nothing of the loser is stored", async () => {
    for (let round = 0; round < 5; round++) {
      const { runId, state } = await startedRun();
      const totalsBefore = await totals();
      const contenders = ["a", "b"].map((label) => ({
        label,
        events: label === "a" ? [thought(1, "from a")] : [thought(1, "from b"), thought(2, "from b")],
        commands: [command(runId, `cmd-${label}`)],
      }));
      const results = await Promise.allSettled(contenders.map((c) => append(runId, state, c.events, { commands: c.commands })));
      const won = results.findIndex((r) => r.status === "fulfilled");
      const lost = results.findIndex((r) => r.status === "rejected");
      expect([won, lost].sort()).toEqual([0, 1]);
      expect((results[lost] as PromiseRejectedResult).reason).toBeInstanceOf(ConcurrencyError);

      const winner = contenders[won];
      const after = await footprint(runId);
      expect(after.events.slice(2).map((e) => (e.data as { text: string }).text)).toEqual(winner.events.map((e) => (e.data as { text: string }).text));
      expect(after.events.map((e) => e.metadata.seq)).toEqual(Array.from({ length: 2 + winner.events.length }, (_, i) => i + 1));
      expect(after.outbox.map((r) => r.msg_id)).toEqual([`${runId}:cmd-${winner.label}`]);
      expect(after.run).toMatchObject({ state: "running", version: 2 + winner.events.length });
      expect(await totals()).toEqual({
        events: totalsBefore.events + winner.events.length,
        outbox: totalsBefore.outbox + 1,
        runs: totalsBefore.runs,
      });
    }
  });

  it("refuses the second appender when both passed the version check: the unique constraint catches it, and nothing of it stays", async () => {
    const { runId, state } = await startedRun();
    let second: Promise<unknown> | undefined;
    // The first append runs in a transaction held open until the second one waits on its uncommitted row.
    await inTransaction(db.pool, async (client) => {
      await appendRunEvents(client as unknown as Pool, {
        runId,
        tenantId: "acme",
        namespace: NAMESPACE,
        state,
        events: [thought(1, "first")],
        commands: [command(runId, "first")],
      });
      second = append(runId, state, [thought(1, "second"), thought(2, "second")], { commands: [command(runId, "second")] });
      second.catch(() => undefined);
      await untilAnEventInsertWaits(db.pool, "the second appender to wait on the first one's row");
    });
    const err = await second!.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConcurrencyError);
    expect((err as Error & { cause?: { code?: string } }).cause?.code).toBe("23505");

    const after = await footprint(runId);
    expect(after.events.map((e) => [e.metadata.seq, e.type, (e.data as { text?: string }).text])).toEqual([
      [1, "run.queued", undefined],
      [2, "run.started", undefined],
      [3, "thought", "first"],
    ]);
    expect(after.outbox.map((r) => r.msg_id)).toEqual([`${runId}:first`]);
    expect(after.run).toMatchObject({ version: 3 });
  });
});

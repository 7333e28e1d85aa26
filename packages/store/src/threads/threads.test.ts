import { randomUUID } from "node:crypto";
import { addSeconds, initialRunState, initialThreadState, nowMicros, type RunEvent } from "@steward/contract";
import { ConcurrencyError } from "@steward/platform";
import { appendRunEvents } from "../runs/append-run-events";
import { rebuildRunsProjection } from "../runs/rebuild-projection";
import { readStream } from "../event-store/read-stream";
import { useFreshDatabase } from "../../../../test/support/databases";
import { appendThreadEvents } from "./append-thread-events";
import { addRunToThread } from "./add-run-to-thread";
import { archiveThread } from "./archive-thread";
import { forkPoint, forkThread } from "./fork-thread";
import { findOwnThreadState, findThreadByIdempotencyKey, listOwnThreads, listThreadRuns } from "./queries";

const ana = { tenantId: "acme", userId: "ana" };

function queued(threadId: string | null, createdBy = "ana"): RunEvent {
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
      thread_id: threadId,
    },
  };
}

describe("threads (PostgreSQL: the thread's stream, its projection, and runs added race-free)", () => {
  const db = useFreshDatabase("steward_store_threads", 12);

  async function newThread(owner = ana, title: string | null = "Refunds", key?: string) {
    const id = randomUUID();
    const at = nowMicros();
    await appendThreadEvents(db.pool, {
      threadId: id,
      tenantId: owner.tenantId,
      state: initialThreadState,
      events: [{ type: "thread.created", data: { title, created_by: owner.userId, created_at: at } }],
      idempotencyKey: key,
      requestHash: key ? "h" : null,
    });
    return id;
  }

  const addRun = (threadId: string, owner = ana, idempotencyKey?: string) => {
    const runId = randomUUID();
    const event = queued(threadId, owner.userId);
    return addRunToThread(db.pool, {
      threadId,
      owner,
      addedAt: (event.data as { created_at: string }).created_at,
      run: { runId, tenantId: owner.tenantId, state: initialRunState, events: [event], namespace: "thr", idempotencyKey },
    }).then((outcome) => ({ runId, outcome }));
  };

  const finish = (runId: string) => db.pool.query("UPDATE runs SET state = 'succeeded' WHERE id = $1", [runId]);
  const counts = async () =>
    (await db.pool.query<{ events: number; runs: number }>("SELECT (SELECT count(*) FROM events)::int AS events, (SELECT count(*) FROM runs)::int AS runs"))
      .rows[0];

  it("writes thread.created and the projection in one statement; a stale version writes nothing", async () => {
    const id = await newThread();
    const state = await findOwnThreadState(db.pool, ana, id);
    expect(state).toMatchObject({ status: "open", title: "Refunds", run_count: 0, last_run_id: null, version: 1 });
    expect((await readStream(db.pool, id)).map((e) => e.type)).toEqual(["thread.created"]);
    const before = await counts();
    await expect(
      appendThreadEvents(db.pool, {
        threadId: id,
        tenantId: "acme",
        state: initialThreadState,
        events: [{ type: "thread.created", data: { title: null, created_by: "ana", created_at: nowMicros() } }],
      }),
    ).rejects.toBeInstanceOf(ConcurrencyError);
    expect(await counts()).toEqual(before);
  });

  it("adds runs one at a time: a run still active refuses the next; its end lets the next in, in order", async () => {
    const id = await newThread();
    const first = await addRun(id);
    expect(first.outcome.kind).toBe("added");
    const before = await counts();
    expect((await addRun(id)).outcome.kind).toBe("active_run");
    expect(await counts()).toEqual(before);
    await finish(first.runId);
    const second = await addRun(id);
    expect(second.outcome.kind).toBe("added");
    expect(await findOwnThreadState(db.pool, ana, id)).toMatchObject({ run_count: 2, last_run_id: second.runId, version: 3 });
    expect((await listThreadRuns(db.pool, ana, id)).own.map((r) => r.id)).toEqual([first.runId, second.runId]);
    const { rows } = await db.pool.query("SELECT thread_id::text FROM runs WHERE id = $1", [second.runId]);
    expect(rows[0].thread_id).toBe(id);
  });

  it("two runs for one thread at once: exactly one is added, the other refused with nothing written", async () => {
    const id = await newThread();
    for (let round = 0; round < 5; round++) {
      const outcomes = await Promise.all(Array.from({ length: 6 }, () => addRun(id)));
      const added = outcomes.filter((o) => o.outcome.kind === "added");
      expect(added).toHaveLength(1);
      expect(outcomes.filter((o) => o.outcome.kind === "active_run")).toHaveLength(5);
      await finish(added[0].runId);
    }
    const { rows } = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE thread_id = $1", [id]);
    expect(rows[0].n).toBe(5);
    expect((await readStream(db.pool, id)).map((e) => e.type)).toEqual(["thread.created", ...Array(5).fill("thread.run_added")]);
  });

  it("somebody else's thread is none; an archived one takes no run; archiving twice records once", async () => {
    const id = await newThread();
    expect((await addRun(id, { tenantId: "acme", userId: "bob" })).outcome.kind).toBe("not_found");
    expect((await addRun(id, { tenantId: "other", userId: "ana" })).outcome.kind).toBe("not_found");
    expect(await findOwnThreadState(db.pool, { tenantId: "acme", userId: "bob" }, id)).toBeNull();
    expect(await archiveThread(db.pool, { threadId: id, owner: { tenantId: "acme", userId: "bob" }, at: nowMicros() })).toBeNull();
    const archived = await archiveThread(db.pool, { threadId: id, owner: ana, at: nowMicros() });
    expect(archived).toMatchObject({ status: "archived", archived_at: expect.any(String) });
    expect(await archiveThread(db.pool, { threadId: id, owner: ana, at: nowMicros() })).toEqual(archived);
    expect((await readStream(db.pool, id)).map((e) => e.type)).toEqual(["thread.created", "thread.archived"]);
    expect((await addRun(id)).outcome.kind).toBe("archived");
  });

  it("a run's Idempotency-Key used before is reported before the thread's state is", async () => {
    const id = await newThread();
    const first = await addRun(id, ana, "key-1");
    expect(first.outcome.kind).toBe("added");
    expect((await addRun(id, ana, "key-1")).outcome.kind).toBe("key_used");
  });

  it("lists the owner's open threads, most recently active first; finds one by its Idempotency-Key", async () => {
    const owner = { tenantId: "list", userId: "lea" };
    const a = await newThread(owner, "a");
    const b = await newThread(owner, null, "k");
    const c = await newThread(owner, "c");
    await addRun(a, owner);
    await archiveThread(db.pool, { threadId: c, owner, at: nowMicros() });
    const page = await listOwnThreads(db.pool, owner, { page: 1, pageSize: 10 });
    expect(page.items.map((t) => t.id)).toEqual([a, b]);
    expect(page.total).toBe(2);
    expect((await listOwnThreads(db.pool, owner, { page: 2, pageSize: 1 })).items.map((t) => t.id)).toEqual([b]);
    expect(await findThreadByIdempotencyKey(db.pool, owner, "k")).toMatchObject({ snapshot: { id: b, title: null }, requestHash: "h" });
  });

  it("the runs projection rebuild skips threads' streams", async () => {
    const id = await newThread();
    await addRun(id);
    const plain = randomUUID();
    await appendRunEvents(db.pool, { runId: plain, tenantId: "acme", state: initialRunState, events: [queued(null)], namespace: "thr" });
    const rebuilt = await rebuildRunsProjection(db.pool);
    const { rows } = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM runs");
    expect(rebuilt.runs).toBe(rows[0].n);
    expect((await db.pool.query("SELECT 1 FROM runs WHERE id = $1", [id])).rowCount).toBe(0);
  });
  const fork = (sourceId: string, atRunId: string, extra: { owner?: typeof ana; key?: string; hash?: string } = {}) => {
    const forkId = randomUUID();
    return forkThread(db.pool, {
      sourceId,
      owner: extra.owner ?? ana,
      atRunId,
      forkId,
      title: "fork",
      at: nowMicros(),
      idempotencyKey: extra.key,
      requestHash: extra.hash,
    }).then((outcome) => ({ forkId, outcome }));
  };
  const streamAndRow = async (id: string) => ({
    events: (await readStream(db.pool, id)).map((e) => [e.type, e.data]),
    row: (await db.pool.query("SELECT * FROM threads WHERE id = $1", [id])).rows[0],
  });

  it("forks at a run: a new thread naming the runs up to it, in order; the source's events and row are untouched", async () => {
    const id = await newThread();
    const runs: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { runId, outcome } = await addRun(id);
      expect(outcome.kind).toBe("added");
      await finish(runId);
      runs.push(runId);
    }
    const before = await streamAndRow(id);
    const { forkId, outcome } = await fork(id, runs[1]);
    expect(outcome).toMatchObject({ kind: "forked", thread: { status: "open", title: "fork", run_count: 0, last_run_id: null, version: 2 } });
    expect(await findOwnThreadState(db.pool, ana, forkId)).toMatchObject({
      forked_from: { thread_id: id, run_id: runs[1] },
      inherited_run_ids: runs.slice(0, 2),
      version: 2,
    });
    expect((await readStream(db.pool, forkId)).map((e) => e.type)).toEqual(["thread.created", "thread.forked"]);
    expect(await streamAndRow(id)).toEqual(before);

    // The fork's runs: the inherited ones first, then its own; a fork of the fork at an inherited run inherits up to it.
    const { runId: own, outcome: added } = await addRun(forkId);
    expect(added.kind).toBe("added");
    expect(await listThreadRuns(db.pool, ana, forkId)).toMatchObject({ inherited: runs.slice(0, 2).map((r) => ({ id: r })), own: [{ id: own }] });
    expect((await listThreadRuns(db.pool, ana, id)).own.map((r) => r.id)).toEqual(runs);
    expect((await fork(forkId, own)).outcome.kind).toBe("not_ended");
    await finish(own);
    const nested = await fork(forkId, own);
    expect(nested.outcome).toMatchObject({
      kind: "forked",
      thread: { forked_from: { thread_id: forkId, run_id: own }, inherited_run_ids: [...runs.slice(0, 2), own] },
    });
    const atInherited = await fork(forkId, runs[0]);
    expect(atInherited.outcome).toMatchObject({
      kind: "forked",
      thread: { forked_from: { thread_id: forkId, run_id: runs[0] }, inherited_run_ids: [runs[0]] },
    });
  });

  it("refuses, writing nothing: somebody else's thread, a run not of the thread, a run not ended; an archived thread forks", async () => {
    const id = await newThread();
    const { runId } = await addRun(id);
    const other = await newThread();
    const { runId: elsewhere } = await addRun(other);
    await finish(elsewhere);
    const before = await counts();
    expect((await fork(id, runId, { owner: { tenantId: "acme", userId: "bob" } })).outcome.kind).toBe("not_found");
    expect((await fork(id, runId, { owner: { tenantId: "other", userId: "ana" } })).outcome.kind).toBe("not_found");
    expect((await fork(randomUUID(), runId)).outcome.kind).toBe("not_found");
    expect((await fork(id, elsewhere)).outcome.kind).toBe("not_in_thread");
    expect((await fork(id, randomUUID())).outcome.kind).toBe("not_in_thread");
    expect((await fork(id, runId)).outcome.kind).toBe("not_ended");
    expect(await counts()).toEqual(before);
    await finish(runId);
    await archiveThread(db.pool, { threadId: id, owner: ana, at: nowMicros() });
    expect((await fork(id, runId)).outcome.kind).toBe("forked");
  });

  it("a fork's Idempotency-Key shares the threads' key space: used again, the unique index refuses it and nothing is written", async () => {
    const id = await newThread();
    const { runId } = await addRun(id);
    await finish(runId);
    expect((await fork(id, runId, { key: "fork-1", hash: "f" })).outcome.kind).toBe("forked");
    const before = await counts();
    await expect(fork(id, runId, { key: "fork-1", hash: "f" })).rejects.toMatchObject({ code: "23505" });
    expect(await counts()).toEqual(before);
    expect(await findThreadByIdempotencyKey(db.pool, ana, "fork-1")).toMatchObject({
      snapshot: { forked_from: { thread_id: id, run_id: runId } },
      requestHash: "f",
    });
  });
});

describe("the fork point (which runs a fork inherits)", () => {
  const runs = [
    { id: "r1", ended: true },
    { id: "r2", ended: true },
    { id: "r3", ended: false },
  ];

  it("inherits the runs up to and including the one named, in order", () => {
    expect(forkPoint(runs, "r1")).toEqual({ kind: "at", inherited: ["r1"] });
    expect(forkPoint(runs, "r2")).toEqual({ kind: "at", inherited: ["r1", "r2"] });
  });

  it("refuses a run that is not one of them, or one not ended (or with an earlier one not ended)", () => {
    expect(forkPoint(runs, "r9")).toEqual({ kind: "not_in_thread" });
    expect(forkPoint([], "r1")).toEqual({ kind: "not_in_thread" });
    expect(forkPoint(runs, "r3")).toEqual({ kind: "not_ended" });
    expect(
      forkPoint(
        [
          { id: "r1", ended: false },
          { id: "r2", ended: true },
        ],
        "r2",
      ),
    ).toEqual({ kind: "not_ended" });
  });
});

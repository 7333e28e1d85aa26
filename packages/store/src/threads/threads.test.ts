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
import { findOwnThreadState, findThreadByIdempotencyKey, listOwnThreads, listThreadRuns } from "./queries";

const ana = { tenantId: "acme", userId: "ana" };

function queued(threadId: string | null, createdBy = "ana"): RunEvent {
  const createdAt = nowMicros();
  return {
    type: "run.queued",
    data: { input: "hello", mode: "agent", response_language: null, created_by: createdBy, created_at: createdAt, deadline_at: addSeconds(createdAt, 180), thread_id: threadId },
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
    (
      await db.pool.query<{ events: number; runs: number }>(
        "SELECT (SELECT count(*) FROM events)::int AS events, (SELECT count(*) FROM runs)::int AS runs",
      )
    ).rows[0];

  it("writes thread.created and the projection in one statement; a stale version writes nothing", async () => {
    const id = await newThread();
    const state = await findOwnThreadState(db.pool, ana, id);
    expect(state).toMatchObject({ status: "open", title: "Refunds", run_count: 0, last_run_id: null, version: 1 });
    expect((await readStream(db.pool, id)).map((e) => e.type)).toEqual(["thread.created"]);
    const before = await counts();
    await expect(
      appendThreadEvents(db.pool, { threadId: id, tenantId: "acme", state: initialThreadState, events: [{ type: "thread.created", data: { title: null, created_by: "ana", created_at: nowMicros() } }] }),
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
    expect((await listThreadRuns(db.pool, ana, id)).map((r) => r.id)).toEqual([first.runId, second.runId]);
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
});

import { randomUUID } from "node:crypto";
import { createPool } from "@steward/platform";
import { advisoryLocks, useFreshDatabase } from "../../../../../test/support/databases";
import { waitFor } from "../../../../../test/support/wait-for";
import type { HeldRecord, StoredToolResult } from "../../app/idempotency-store";
import { createPgIdempotencyStore } from "./idempotency-store";

/**
 * The record a side-effecting call is serialised by, on real PostgreSQL: held before the PDP answers, its effect
 * and its result committed together, nothing kept by a failed or denied call, a repeat waiting for the first.
 */
describe("the idempotency record of a write", () => {
  const db = useFreshDatabase("steward_tool_exec_records", 6);
  const ok = (n: number): StoredToolResult => ({ resultCode: "ok", result: { result: { n, quote: "it's \\ fine" }, evidence: [] } });

  beforeAll(async () => {
    await db.pool.query("CREATE TABLE effects (run_id uuid, note text)");
  });

  // A record a failed expectation left held would keep its client and hang the pool's end: let every one go.
  const holding: Array<Promise<HeldRecord>> = [];
  afterEach(async () => {
    await Promise.all(holding.splice(0).map((held) => held.then((r) => r.release()).catch(() => undefined)));
  });
  const storeOf = () => {
    const store = createPgIdempotencyStore(db.pool);
    return {
      ...store,
      hold: (runId: string, fingerprint: string, toolName: string) => {
        const held = store.hold(runId, fingerprint, toolName);
        holding.push(held);
        return held;
      },
    };
  };

  const effects = async (runId: string) => Number((await db.pool.query("SELECT count(*) AS n FROM effects WHERE run_id = $1", [runId])).rows[0].n);
  const kept = async (runId: string) => (await db.pool.query("SELECT result_code, result FROM tool_results WHERE run_id = $1", [runId])).rows;
  const locksHeld = () => advisoryLocks(db.pool, true);

  it("keeps a successful result with the effect in one commit, and a later hold finds it", async () => {
    const store = storeOf();
    const runId = randomUUID();
    const first = await store.hold(runId, "f1", "test_counter");
    expect(first.stored).toBeNull();
    const value = await first.complete(async (tx) => {
      await tx.query("INSERT INTO effects VALUES ($1, 'done')", [runId]);
      return ok(1);
    });
    expect(value).toEqual(ok(1));
    expect(await effects(runId)).toBe(1);
    expect(await kept(runId)).toEqual([{ result_code: "ok", result: ok(1).result }]);

    const again = await store.hold(runId, "f1", "test_counter");
    expect(again.stored).toEqual(ok(1));
    await again.release();
    expect(await effects(runId)).toBe(1);
    expect(await store.find(runId, "f1")).toEqual(ok(1));
  });

  it("rolls back the effect of a failed result or of work that throws, and keeps nothing", async () => {
    const store = storeOf();
    const runId = randomUUID();
    const failed = await store.hold(runId, "f2", "test_counter");
    const value = await failed.complete(async (tx) => {
      await tx.query("INSERT INTO effects VALUES ($1, 'half')", [runId]);
      return { resultCode: "60302", result: { result: { note: "tool failed" }, evidence: [] } };
    });
    expect(value.resultCode).toBe("60302");
    const thrown = await store.hold(runId, "f2", "test_counter");
    expect(thrown.stored).toBeNull();
    await expect(
      thrown.complete(async (tx) => {
        await tx.query("INSERT INTO effects VALUES ($1, 'half')", [runId]);
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(await effects(runId)).toBe(0);
    expect(await kept(runId)).toEqual([]);
    expect(await locksHeld()).toBe(0);
  });

  it("a released record (a denied call) keeps nothing and frees the call at once", async () => {
    const store = storeOf();
    const runId = randomUUID();
    const denied = await store.hold(runId, "f3", "test_counter");
    await denied.release();
    await expect(denied.release()).rejects.toThrow(/once/);
    expect(await locksHeld()).toBe(0);
    const next = await store.hold(runId, "f3", "test_counter");
    expect(next.stored).toBeNull();
    await next.release();
  });

  it("a repeat of a call in progress waits for it and gets its result: the effect happens once", async () => {
    const store = storeOf();
    const runId = randomUUID();
    const first = await store.hold(runId, "f4", "test_counter");
    let repeatHeld = false;
    const repeat = store.hold(runId, "f4", "test_counter").then((r) => {
      repeatHeld = true;
      return r;
    });
    // The repeat is queued on the first's lock (seen in pg_locks), not merely slow.
    await waitFor(async () => ((await advisoryLocks(db.pool, false)) === 1 ? true : undefined), { what: "the repeat waiting on the record" });
    expect(repeatHeld).toBe(false);
    await first.complete(async (tx) => {
      await tx.query("INSERT INTO effects VALUES ($1, 'once')", [runId]);
      return ok(4);
    });
    const second = await repeat;
    expect(second.stored).toEqual(ok(4));
    await second.release();
    expect(await effects(runId)).toBe(1);
  });

  it("says whether a record could be held now without waiting for a connection", async () => {
    const one = createPool(db.url, { max: 1 });
    try {
      const store = createPgIdempotencyStore(one);
      expect(store.spare()).toBe(true);
      const held = await store.hold(randomUUID(), "fs", "test_counter");
      expect(store.spare()).toBe(false);
      await held.release();
      expect(store.spare()).toBe(true);
    } finally {
      await one.end();
    }
  });

  it("a different call of the same run is not held up by one in progress", async () => {
    const store = storeOf();
    const runId = randomUUID();
    const a = await store.hold(runId, "fa", "test_counter");
    const b = await store.hold(runId, "fb", "test_counter");
    await b.release();
    await a.release();
  });
});

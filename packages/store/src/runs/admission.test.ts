import { randomUUID } from "node:crypto";
import { createPool, type Pool } from "@steward/platform";
import { freshDatabase } from "../../../../test/support/databases";
import { admitDeferred } from "./admission";
import { claimRun } from "./lease";

describe("run admission: at most N of a tenant's runs in flight, across runners (real PostgreSQL)", () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: Pool;

  beforeAll(async () => {
    db = await freshDatabase("steward_admission");
    pool = createPool(db.url, { max: 12 });
  });

  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  async function queuedRuns(tenant: string, count: number): Promise<string[]> {
    const ids = Array.from({ length: count }, () => randomUUID());
    await pool.query(
      `INSERT INTO runs (id, tenant_id, created_by, state, mode, input, created_at, deadline_at, usage, version)
       SELECT id, $2, 'u', 'queued', 'execute', 'q', clock_timestamp() + make_interval(secs => ord / 1000.0),
              clock_timestamp() + interval '1 hour', '{}', 1
         FROM unnest($1::uuid[]) WITH ORDINALITY AS t(id, ord)`,
      [ids, tenant],
    );
    return ids;
  }

  it("claims from many runners at once admit exactly the limit and defer the rest; an ended run admits the oldest deferred", async () => {
    const ids = await queuedRuns("t-flood", 20);
    const outcomes = await Promise.all(
      ids.map((id, i) => claimRun(pool, id, `runner-${i % 4}`, 30_000, { tenantId: "t-flood", maxRunning: 3 })),
    );
    const claimed = ids.filter((_, i) => outcomes[i].kind === "claimed");
    expect(claimed).toHaveLength(3);
    expect(outcomes.filter((o) => o.kind === "deferred")).toHaveLength(17);

    // Another tenant is not held back by the first one's limit.
    const [other] = await queuedRuns("t-quiet", 1);
    expect(await claimRun(pool, other, "runner-0", 30_000, { tenantId: "t-quiet", maxRunning: 3 })).toMatchObject({ kind: "claimed" });

    // Nothing frees a place yet: nothing is admitted.
    expect(await admitDeferred(pool, "ns", "t-flood", 3)).toEqual([]);
    // One ends: the oldest deferred run is admitted and its command goes to the outbox.
    await pool.query("UPDATE runs SET state = 'succeeded' WHERE id = $1", [claimed[0]]);
    const deferred = ids.filter((id) => !claimed.includes(id));
    const admitted = await admitDeferred(pool, "ns", "t-flood", 3);
    expect(admitted).toEqual([deferred[0]]);
    const { rows } = await pool.query<{ payload: { run_id: string } }>("SELECT payload FROM outbox WHERE payload::jsonb->>'run_id' = $1", [deferred[0]]);
    expect(rows).toHaveLength(1);
    // The admitted run's command is claimed like any other; a deferred one's duplicate command is deferred again.
    expect(await claimRun(pool, deferred[0], "runner-1", 30_000, { tenantId: "t-flood", maxRunning: 3 })).toMatchObject({ kind: "claimed" });
    expect(await claimRun(pool, deferred[1], "runner-1", 30_000, { tenantId: "t-flood", maxRunning: 3 })).toEqual({ kind: "deferred" });
  });

  it("admits a new run in one round trip after its claim, with its events in hand (no read of the stream after it)", async () => {
    const [id] = await queuedRuns("t-one-trip", 1);
    await pool.query(
      "INSERT INTO events (event_id, stream_id, tenant_id, version, type, data) VALUES ($1, $2, 't-one-trip', 1, 'run.queued', '{}')",
      [randomUUID(), id],
    );
    // Every statement sent, on the pool or on a client taken from it.
    let sent = 0;
    const counting = {
      query: (...args: unknown[]) => (sent++, (pool.query as (...a: unknown[]) => unknown)(...args)),
      connect: async () => {
        const client = await pool.connect();
        return new Proxy(client, {
          get(target, key) {
            if (key === "query") return (...args: unknown[]) => (sent++, (target.query as (...a: unknown[]) => unknown).apply(target, args));
            const value = (target as unknown as Record<string | symbol, unknown>)[key];
            return typeof value === "function" ? value.bind(target) : value;
          },
        });
      },
    } as unknown as Pool;
    const outcome = await claimRun(counting, id, "runner-0", 30_000, { tenantId: "t-one-trip", maxRunning: 3 });
    expect(outcome).toMatchObject({ kind: "claimed" });
    expect(outcome.kind === "claimed" && outcome.events?.map((e) => [e.type, e.metadata.seq])).toEqual([["run.queued", 1]]);
    expect(sent).toBe(2);
    // The command of a new run says so: its admission is asked for first, one round trip in all.
    const [fresh] = await queuedRuns("t-one-trip", 1);
    sent = 0;
    expect(await claimRun(counting, fresh, "runner-0", 30_000, { tenantId: "t-one-trip", maxRunning: 3 }, { newRun: true })).toMatchObject({ kind: "claimed" });
    expect(sent).toBe(1);
    // A wrong hint (the run was admitted before) costs that round trip, and the claim follows as usual.
    sent = 0;
    expect(await claimRun(counting, fresh, "runner-0", 30_000, { tenantId: "t-one-trip", maxRunning: 3 }, { newRun: true })).toMatchObject({ kind: "claimed" });
    expect(sent).toBe(2);
    const { rows } = await pool.query("SELECT admitted_at IS NOT NULL AS admitted, lease_owner FROM runs WHERE id = $1", [id]);
    expect(rows).toEqual([{ admitted: true, lease_owner: "runner-0" }]);
  });

  it("without a limit a queued run is claimed as before", async () => {
    const [id] = await queuedRuns("t-free", 1);
    expect(await claimRun(pool, id, "runner-0", 30_000)).toMatchObject({ kind: "claimed" });
  });
});

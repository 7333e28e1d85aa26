import { randomUUID } from "node:crypto";
import { createPool, type Pool } from "@steward/platform";
import { freshDatabase } from "../../../../test/support/databases";
import { admitDeferred, admitRuns } from "./admission";
import { batchedAdmissions } from "./admission-batches";
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
    const outcomes = await Promise.all(ids.map((id, i) => claimRun(pool, id, `runner-${i % 4}`, 30_000, { tenantId: "t-flood", maxRunning: 3 })));
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
    await pool.query("INSERT INTO events (event_id, stream_id, tenant_id, version, type, data) VALUES ($1, $2, 't-one-trip', 1, 'run.queued', '{}')", [
      randomUUID(),
      id,
    ]);
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

  it("admits a tenant's runs together as one at a time would, in the order asked", async () => {
    const tenant = "t-together";
    const [running] = await queuedRuns(tenant, 1);
    expect(await claimRun(pool, running, "runner-0", 30_000, { tenantId: tenant, maxRunning: 3 })).toMatchObject({ kind: "claimed" });
    const [first, heldElsewhere, second, third, heldLate, ended] = await queuedRuns(tenant, 6);
    const [otherTenant] = await queuedRuns("t-together-other", 1);
    await pool.query("UPDATE runs SET lease_owner = 'runner-9', lease_until = clock_timestamp() + interval '1 minute' WHERE id = ANY($1::uuid[])", [
      [heldElsewhere, heldLate],
    ]);
    await pool.query("UPDATE runs SET state = 'cancelled' WHERE id = $1", [ended]);
    await pool.query(
      "INSERT INTO events (event_id, stream_id, tenant_id, version, type, data) VALUES ($1, $2, $3, 1, 'run.queued', '{}'), ($4, $2, $3, 2, 'run.cancel_requested', '{}')",
      [randomUUID(), second, tenant, randomUUID()],
    );

    const asked = [first, heldElsewhere, second, otherTenant, ended, third, heldLate, first];
    const outcomes = await admitRuns(pool, { tenantId: tenant, owner: "runner-1", leaseMs: 30_000, maxRunning: 3 }, asked);

    // Two places: the first free run and the next free one take them. A run another runner holds is left as it is
    // while places remain, and deferred once they are gone; so is every free run after them.
    expect(outcomes.map((o) => o.kind)).toEqual(["admitted", "unchanged", "admitted", "unchanged", "unchanged", "deferred", "deferred", "admitted"]);
    expect(outcomes[0]).toEqual({ kind: "admitted", events: [] });
    expect(outcomes[2].kind === "admitted" && outcomes[2].events.map((e) => [e.type, e.metadata.seq])).toEqual([
      ["run.queued", 1],
      ["run.cancel_requested", 2],
    ]);
    const { rows } = await pool.query<{ id: string; admitted: boolean; deferred: boolean; lease_owner: string | null }>(
      "SELECT id, admitted_at IS NOT NULL AS admitted, deferred_at IS NOT NULL AS deferred, lease_owner FROM runs WHERE id = ANY($1::uuid[])",
      [asked],
    );
    const row = (id: string) => rows.find((r) => r.id === id);
    expect(row(first)).toEqual({ id: first, admitted: true, deferred: false, lease_owner: "runner-1" });
    expect(row(second)).toEqual({ id: second, admitted: true, deferred: false, lease_owner: "runner-1" });
    expect(row(heldElsewhere)).toEqual({ id: heldElsewhere, admitted: false, deferred: false, lease_owner: "runner-9" });
    expect(row(third)).toEqual({ id: third, admitted: false, deferred: true, lease_owner: null });
    expect(row(heldLate)).toEqual({ id: heldLate, admitted: false, deferred: true, lease_owner: "runner-9" });
    expect(row(otherTenant)).toEqual({ id: otherTenant, admitted: false, deferred: false, lease_owner: null });
    expect(row(ended)).toEqual({ id: ended, admitted: false, deferred: false, lease_owner: null });
  });

  it("claims of one tenant asked for at once are admitted by one statement per runner, exactly up to the limit", async () => {
    const tenant = "t-burst";
    const ids = await queuedRuns(tenant, 20);
    const [quiet] = await queuedRuns("t-burst-quiet", 1);
    const statements: { tenant: string; runs: number }[] = [];
    const counting = new Proxy(pool, {
      get(target, key) {
        if (key !== "query") return Reflect.get(target, key);
        return (config: { name?: string; values?: unknown[] }, ...rest: unknown[]) => {
          if (config?.name === "steward.admit_runs") statements.push({ tenant: config.values![1] as string, runs: (config.values![0] as string[]).length });
          return (target.query as (...a: unknown[]) => unknown).call(target, config, ...rest);
        };
      },
    });
    const runners = ["runner-a", "runner-b"].map((owner) => ({ owner, admissions: batchedAdmissions(counting) }));
    const claims = ids.map((id, i) => {
      const { owner, admissions } = runners[i % 2];
      return claimRun(pool, id, owner, 30_000, { tenantId: tenant, maxRunning: 3, admissions }, { newRun: true });
    });
    const quietClaim = claimRun(
      pool,
      quiet,
      "runner-a",
      30_000,
      { tenantId: "t-burst-quiet", maxRunning: 3, admissions: runners[0].admissions },
      { newRun: true },
    );
    const outcomes = await Promise.all(claims);

    expect(outcomes.filter((o) => o.kind === "claimed")).toHaveLength(3);
    expect(outcomes.filter((o) => o.kind === "deferred")).toHaveLength(17);
    expect(await quietClaim).toMatchObject({ kind: "claimed" });
    // One statement per runner for the burst, one for the other tenant: not one per run, never two tenants in one.
    expect(statements.sort((a, b) => a.tenant.localeCompare(b.tenant) || a.runs - b.runs)).toEqual([
      { tenant: "t-burst", runs: 10 },
      { tenant: "t-burst", runs: 10 },
      { tenant: "t-burst-quiet", runs: 1 },
    ]);
    const { rows } = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE tenant_id = $1 AND admitted_at IS NOT NULL", [tenant]);
    expect(rows[0].n).toBe(3);
  });

  it("the one-run call kept for runners not yet upgraded answers as before, deciding by the same rule", async () => {
    const tenant = "t-older-runner";
    const [admitted, deferred] = await queuedRuns(tenant, 2);
    await pool.query("INSERT INTO events (event_id, stream_id, tenant_id, version, type, data) VALUES ($1, $2, $3, 1, 'run.queued', '{}')", [
      randomUUID(),
      admitted,
      tenant,
    ]);
    const call = (run: string) =>
      pool.query<{ admitted: boolean; type: string | null }>("SELECT admitted, type FROM admit_run($1, $2, 'runner-old', 1, 30)", [run, tenant]);
    expect((await call(admitted)).rows).toEqual([{ admitted: true, type: "run.queued" }]);
    expect((await call(deferred)).rows).toEqual([{ admitted: false, type: null }]);
    expect((await call(admitted)).rows).toEqual([]); // admitted already: unchanged
  });

  it("without a limit a queued run is claimed as before", async () => {
    const [id] = await queuedRuns("t-free", 1);
    expect(await claimRun(pool, id, "runner-0", 30_000)).toMatchObject({ kind: "claimed" });
  });
});

import { randomUUID } from "node:crypto";
import type { PoolClient } from "pg";
import { createLogger, createPool, type Pool } from "@steward/platform";
import { claimRun } from "@steward/store";
import { freshDatabase } from "../../../../test/support/databases";
import { waitFor } from "../../../../test/support/wait-for";
import { createLeaseKeeper, type LeaseKeeper } from "./lease-keeper";

/** The keeper is all that keeps a driven run's command alive on the bus (the loop sends nothing per step). */
describe("lease keeper: the bus hears of every held run at each tick, the leases are extended (real PostgreSQL)", () => {
  const LEASE_MS = 300; // a tick every 100 ms
  let db: { url: string; drop(): Promise<void> };
  let pool: Pool;
  let keeper: LeaseKeeper | undefined;
  let blocker: PoolClient | undefined;

  beforeAll(async () => {
    db = await freshDatabase("steward_lease_keeper");
    pool = createPool(db.url, { max: 4 });
  });

  afterEach(async () => {
    keeper?.stop();
    keeper = undefined;
    if (blocker) {
      await blocker.query("ROLLBACK").catch(() => undefined);
      blocker.release();
      blocker = undefined;
    }
  });

  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  async function claimedRun(owner: string): Promise<string> {
    const id = randomUUID();
    await pool.query(
      `INSERT INTO runs (id, tenant_id, created_by, state, mode, input, created_at, deadline_at, usage, version)
       VALUES ($1, 't', 'u', 'running', 'execute', 'q', clock_timestamp(), clock_timestamp() + interval '1 hour', '{}', 2)`,
      [id],
    );
    expect(await claimRun(pool, id, owner, LEASE_MS)).toMatchObject({ kind: "claimed" });
    return id;
  }
  const leaseMsLeft = async (id: string) =>
    (await pool.query<{ ms: number }>("SELECT (extract(epoch FROM lease_until - clock_timestamp()) * 1000)::int AS ms FROM runs WHERE id = $1", [id])).rows[0]
      .ms;

  it("given a held run, when ticks pass, then its command is kept alive and its lease stays ahead of the clock", async () => {
    const runId = await claimedRun("runner-a");
    let beats = 0;
    keeper = createLeaseKeeper({ pool, runnerId: "runner-a", logger: createLogger("lease-keeper-test", "silent") }, { leaseMs: LEASE_MS });
    keeper.hold(runId, { working: () => void beats++, onLost: () => undefined });
    // Three leases' worth of time: without the extends the lease would have lapsed long before.
    await waitFor(() => (beats >= 9 ? true : undefined), { timeoutMs: 10_000, what: "nine heartbeats" });
    expect(await leaseMsLeft(runId)).toBeGreaterThan(0);
  });

  it("given the extend waits on PostgreSQL, when ticks pass, then the bus still hears at each of them", async () => {
    const runId = await claimedRun("runner-a");
    // Another session holds the run's row: the keeper's extend waits for its lock.
    blocker = await pool.connect();
    await blocker.query("BEGIN");
    await blocker.query("SELECT id FROM runs WHERE id = $1 FOR UPDATE", [runId]);
    let beats = 0;
    keeper = createLeaseKeeper({ pool, runnerId: "runner-a", logger: createLogger("lease-keeper-test", "silent") }, { leaseMs: LEASE_MS });
    keeper.hold(runId, { working: () => void beats++, onLost: () => undefined });
    await waitFor(
      async () => {
        const { rows } = await pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        );
        return rows[0].n > 0 ? true : undefined;
      },
      { timeoutMs: 10_000, what: "the extend waiting for the row lock" },
    );
    const before = beats;
    await waitFor(() => (beats >= before + 3 ? true : undefined), { timeoutMs: 10_000, what: "three heartbeats while the extend waits" });
    // Still one extend in flight: the ticks did not queue more behind the lock.
    const { rows } = await pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
    );
    expect(rows[0].n).toBe(1);
  });

  it("given another runner took the run, when the keeper extends, then the run is reported lost once and no longer kept alive", async () => {
    const runId = await claimedRun("runner-a");
    await pool.query("UPDATE runs SET lease_owner = 'runner-b', lease_until = clock_timestamp() + interval '1 minute' WHERE id = $1", [runId]);
    let lost = 0;
    let beats = 0;
    keeper = createLeaseKeeper({ pool, runnerId: "runner-a", logger: createLogger("lease-keeper-test", "silent") }, { leaseMs: LEASE_MS });
    keeper.hold(runId, { working: () => void beats++, onLost: () => void lost++ });
    await waitFor(() => (lost > 0 ? true : undefined), { timeoutMs: 10_000, what: "the run reported lost" });
    const afterLoss = beats;
    // A run held meanwhile proves that ticks go on; the lost one is not among them any more.
    const other = await claimedRun("runner-a");
    let otherBeats = 0;
    keeper.hold(other, { working: () => void otherBeats++, onLost: () => undefined });
    await waitFor(() => (otherBeats >= 3 ? true : undefined), { timeoutMs: 10_000, what: "ticks for the other run" });
    expect(beats).toBe(afterLoss);
    expect(lost).toBe(1);
  });
});

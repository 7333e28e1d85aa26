import { randomUUID } from "node:crypto";
import { createPool, type Pool } from "@steward/platform";
import { freshDatabase } from "../../../../test/support/databases";
import { initialRunState } from "@steward/contract";
import { readStream } from "../event-store/read-stream";
import { appendRunEvents } from "./append-run-events";
import { claimRun, extendLeases, releaseLease } from "./lease";

describe("run leases: a heartbeat extends its own and names the runs taken over (real PostgreSQL)", () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: Pool;

  beforeAll(async () => {
    db = await freshDatabase("steward_lease");
    pool = createPool(db.url, { max: 4 });
  });

  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  async function runningRun(): Promise<string> {
    const id = randomUUID();
    await pool.query(
      `INSERT INTO runs (id, tenant_id, created_by, state, mode, input, created_at, deadline_at, usage, version)
       VALUES ($1, 't', 'u', 'running', 'execute', 'q', clock_timestamp(), clock_timestamp() + interval '1 hour', '{}', 2)`,
      [id],
    );
    return id;
  }
  const leaseOf = async (id: string) =>
    (
      await pool.query<{ owner: string | null; ms: number | null }>(
        "SELECT lease_owner AS owner, (extract(epoch FROM lease_until - clock_timestamp()) * 1000)::int AS ms FROM runs WHERE id = $1",
        [id],
      )
    ).rows[0];

  it("extends the caller's leases; a run another runner claimed after its lease lapsed is reported; an ended one is not", async () => {
    const [kept, lapsed, ended] = [await runningRun(), await runningRun(), await runningRun()];
    for (const id of [kept, lapsed, ended]) expect(await claimRun(pool, id, "runner-a", 1000)).toMatchObject({ kind: "claimed" });
    // The lapsed one: its lease is over, and runner B claims it.
    await pool.query("UPDATE runs SET lease_until = clock_timestamp() - interval '1 second' WHERE id = $1", [lapsed]);
    expect(await claimRun(pool, lapsed, "runner-b", 60_000)).toMatchObject({ kind: "claimed" });
    // The ended one: its last event cleared the lease (as the projection does), before runner A let it go.
    await pool.query("UPDATE runs SET state = 'succeeded', lease_owner = NULL, lease_until = NULL WHERE id = $1", [ended]);

    const taken = await extendLeases(pool, "runner-a", [kept, lapsed, ended], 60_000);
    expect([...taken]).toEqual([lapsed]);
    expect(await leaseOf(kept)).toEqual({ owner: "runner-a", ms: expect.any(Number) });
    expect((await leaseOf(kept)).ms).toBeGreaterThan(30_000);
    // Runner B's lease is untouched by A's heartbeat.
    expect((await leaseOf(lapsed)).owner).toBe("runner-b");
    expect(await leaseOf(ended)).toEqual({ owner: null, ms: null });

    await releaseLease(pool, kept, "runner-a");
    expect(await extendLeases(pool, "runner-a", [kept], 60_000)).toEqual(new Set());
    expect((await leaseOf(kept)).owner).toBeNull();
  });

  it("given a run with events, when it is claimed, then its events come with the claim in order; a refused claim reads none", async () => {
    const runId = randomUUID();
    const queued = await appendRunEvents(pool, {
      runId,
      tenantId: "t",
      state: initialRunState,
      events: [
        {
          type: "run.queued",
          data: {
            input: "q",
            mode: "agent",
            response_language: null,
            created_by: "u",
            created_at: "2026-12-01T10:00:00.000000Z",
            deadline_at: "2026-12-01T10:03:00.000000Z",
            thread_id: null,
          },
        },
      ],
      namespace: "lease",
    });
    await appendRunEvents(pool, {
      runId,
      tenantId: "t",
      state: queued.state,
      events: [{ type: "run.started", data: { runner_id: "r", started_at: "2026-12-01T10:00:01.000000Z" } }],
      namespace: "lease",
    });
    const claim = await claimRun(pool, runId, "runner-a", 60_000);
    expect(claim.kind).toBe("claimed");
    const events = claim.kind === "claimed" ? (claim.events ?? []) : [];
    expect(events.map((e) => [e.type, e.metadata.seq])).toEqual([
      ["run.queued", 1],
      ["run.started", 2],
    ]);
    expect(events).toEqual(await readStream(pool, runId));
    expect(await claimRun(pool, runId, "runner-b", 60_000)).toEqual({ kind: "held", retryInMs: expect.any(Number) });
  });
});

import { randomUUID } from "node:crypto";
import { createPool, type Pool } from "@steward/platform";
import { freshDatabase } from "../../../../test/support/databases";
import { listEndedThreadRuns } from "./ended-thread-runs";

describe("a thread's ended runs: the earlier turns a run in that thread is shown (real PostgreSQL)", () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: Pool;

  beforeAll(async () => {
    db = await freshDatabase("steward_thread_runs");
    pool = createPool(db.url, { max: 2 });
  });

  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  /** A run row as the projection holds it: created `created` seconds after 09:00, ended `finished` (or not). */
  async function run(row: { thread: string | null; created: number; finished: number | null; tenant?: string; user?: string }): Promise<string> {
    const id = randomUUID();
    await pool.query(
      `INSERT INTO runs (id, tenant_id, created_by, thread_id, state, mode, input, created_at, finished_at, deadline_at, usage, version)
       VALUES ($1, $2, $3, $4, $5, 'agent', 'q', '2026-11-30T09:00:00Z'::timestamptz + make_interval(secs => $6),
               '2026-11-30T09:00:00Z'::timestamptz + make_interval(secs => $7), '2026-11-30T10:00:00Z', '{}', 2)`,
      [id, row.tenant ?? "t", row.user ?? "u", row.thread, row.finished === null ? "running" : "succeeded", row.created, row.finished],
    );
    return id;
  }

  it("lists the creator's runs of the thread that ended by the asking run's creation, oldest first; never the asker, an active, later or foreign run", async () => {
    const thread = randomUUID();
    const second = await run({ thread, created: 20, finished: 25 });
    const first = await run({ thread, created: 10, finished: 15 });
    const endedExactly = await run({ thread, created: 26, finished: 30 });
    const asker = await run({ thread, created: 30, finished: null });
    await run({ thread, created: 28, finished: null }); // still active
    await run({ thread, created: 29, finished: 31 }); // ended after the asker was created
    await run({ thread, created: 5, finished: 6, user: "someone-else" });
    await run({ thread, created: 5, finished: 6, tenant: "other-tenant" });
    await run({ thread: randomUUID(), created: 5, finished: 6 });
    await run({ thread: null, created: 5, finished: 6 });

    const ids = await listEndedThreadRuns(pool, { tenantId: "t", createdBy: "u", threadId: thread, runId: asker, endedBy: "2026-11-30T09:00:30.000000Z" });
    expect(ids).toEqual([first, second, endedExactly]);
  });

  /** A fork's projection row as the threads store writes it: its inherited runs, in order. */
  async function fork(inherited: string[], owner: { tenant?: string; user?: string } = {}): Promise<string> {
    const id = randomUUID();
    await pool.query(
      `INSERT INTO threads (id, tenant_id, created_by, status, created_at, updated_at, version, forked_from_thread_id, forked_from_run_id, inherited_run_ids)
       VALUES ($1, $2, $3, 'open', now(), now(), 2, $4, $5, $6::uuid[])`,
      [id, owner.tenant ?? "t", owner.user ?? "u", randomUUID(), inherited.at(-1), inherited],
    );
    return id;
  }

  it("a fork's run sees the inherited turns first, in the fork's order, then the fork's own ended turns; the source never sees the fork's", async () => {
    const source = randomUUID();
    const one = await run({ thread: source, created: 10, finished: 11 });
    const two = await run({ thread: source, created: 20, finished: 21 });
    const three = await run({ thread: source, created: 30, finished: 31 });
    const forked = await fork([one, two]);
    const own = await run({ thread: forked, created: 40, finished: 41 });
    const asker = await run({ thread: forked, created: 50, finished: null });
    const query = { tenantId: "t", createdBy: "u", threadId: forked, runId: asker, endedBy: "2026-11-30T09:00:50.000000Z" };
    expect(await listEndedThreadRuns(pool, query)).toEqual([one, two, own]);
    expect(await listEndedThreadRuns(pool, query)).toEqual([one, two, own]); // the same turns, loaded again

    const sourceAsker = await run({ thread: source, created: 60, finished: null });
    const fromSource = await listEndedThreadRuns(pool, { ...query, threadId: source, runId: sourceAsker, endedBy: "2026-11-30T09:01:00.000000Z" });
    expect(fromSource).toEqual([one, two, three]);

    // The inherited list is the fork's order, not creation order; another creator's fork row lends no turns.
    const reordered = await fork([two, one]);
    expect(await listEndedThreadRuns(pool, { ...query, threadId: reordered })).toEqual([two, one]);
    const foreign = await fork([one, two], { user: "someone-else" });
    expect(await listEndedThreadRuns(pool, { ...query, threadId: foreign })).toEqual([]);
  });
});

import { ForbiddenError, createLogger, createPool, ValidationError, type Pool } from "@steward/platform";
import { createPdp, defaultPolicyDir, type Pdp } from "@steward/pdp";
import type { PolicyDecisionApi } from "@steward/proto";
import { NEW_RUN_HEADER, grantRole, revokeRole } from "@steward/store";
import { createRunHandler, type CreateRunCommand } from "./create-run";
import { createPgRunWriter } from "../adapters/pg/run-writer";
import { createGatewayDecisions, type PendingPermit } from "./gateway-decisions";
import { freshDatabase, withoutAutovacuum } from "../../../../test/support/databases";

/**
 * One commit per created run, with or without an Idempotency-Key, counted by PostgreSQL
 * itself (pg_stat_database of a database of the test's own, over one connection).
 */
describe("createRun: one commit per created run, Idempotency-Key semantics unchanged (real PostgreSQL)", () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: Pool;
  const statements: string[] = [];
  let createRun: ReturnType<typeof createRunHandler>;

  beforeAll(async () => {
    db = await freshDatabase("steward_gateway_create");
    // One connection: the backend whose counters are flushed below is the one that did the work.
    pool = createPool(db.url, { max: 1 });
    await withoutAutovacuum(pool);
    const counted = {
      query: (query: string | { text: string }, values?: unknown[]) => {
        statements.push(typeof query === "string" ? query : query.text);
        return pool.query(query as string, values);
      },
      connect: () => {
        statements.push("(connect)");
        return pool.connect();
      },
    } as unknown as Pool;
    createRun = createRunHandler({ runs: createPgRunWriter({ pool: counted, namespace: "createrun" }), namespace: "createrun" });
  });

  afterAll(async () => {
    await pool?.end();
    if (db) await db.drop();
  });

  /** Transactions committed and rolled back by `work`, as PostgreSQL counts them (its own reads subtracted). */
  async function transactionsOf(work: () => Promise<unknown>): Promise<{ commits: number; rollbacks: number; statements: number }> {
    const read = async () => {
      // Makes this backend publish its counters at the end of this transaction, before the next statement.
      await pool.query("SELECT pg_stat_force_next_flush()");
      const { rows } = await pool.query<{ c: number; r: number }>(
        "SELECT xact_commit::int AS c, xact_rollback::int AS r FROM pg_stat_database WHERE datname = current_database()",
      );
      return rows[0];
    };
    const measure = async (w: () => Promise<unknown>) => {
      const before = await read();
      statements.splice(0);
      await w().catch(() => undefined);
      const count = statements.length;
      const after = await read();
      return { commits: after.c - before.c, rollbacks: after.r - before.r, statements: count };
    };
    const idle = await measure(async () => undefined);
    const busy = await measure(work);
    return { commits: busy.commits - idle.commits, rollbacks: busy.rollbacks - idle.rollbacks, statements: busy.statements };
  }

  const principal = { tenantId: "acme", userId: "alice", roles: ["member"] };
  const command = (input: string, idempotencyKey?: string): CreateRunCommand => ({
    principal,
    body: { input },
    idempotencyKey,
    traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
  });
  const runsOf = async () => (await pool.query("SELECT id, idempotency_key FROM runs ORDER BY created_at")).rows;

  it("creates a run without a key in one statement, one commit", async () => {
    let id = "";
    expect(await transactionsOf(async () => (id = (await createRun(command("hello"))).id))).toEqual({ commits: 1, rollbacks: 0, statements: 1 });
    expect(await runsOf()).toEqual([{ id, idempotency_key: null }]);
    // Its command tells the runner it is new: its admission is asked for first (one round trip to its start).
    const { rows } = await pool.query("SELECT headers FROM outbox WHERE run_id = $1 AND subject LIKE '%run.requested'", [id]);
    expect(rows.map((r) => r.headers[NEW_RUN_HEADER])).toEqual(["true"]);
  });

  it("creates a run with a key used for the first time in one statement, one commit: the key is not looked up first", async () => {
    let id = "";
    expect(await transactionsOf(async () => (id = (await createRun(command("keyed", "k-1"))).id))).toEqual({ commits: 1, rollbacks: 0, statements: 1 });
    expect((await runsOf()).filter((r) => r.idempotency_key === "k-1")).toEqual([{ id, idempotency_key: "k-1" }]);
  });

  it("answers a retry with the run created first and keeps nothing of the retry", async () => {
    const first = await createRun(command("retried", "k-2"));
    const before = await runsOf();
    let again: { id: string; state: string } | undefined;
    const cost = await transactionsOf(async () => (again = await createRun(command("retried", "k-2"))));
    expect(again).toEqual(first);
    expect(await runsOf()).toEqual(before);
    // The insert meets the unique index and skips the run (nothing rolled back, nothing left for vacuum), then the
    // first run is read.
    expect(cost).toEqual({ commits: 2, rollbacks: 0, statements: 2 });
    const events = await pool.query("SELECT count(*)::int AS n FROM events WHERE tenant_id = 'acme'");
    const outbox = await pool.query("SELECT count(*)::int AS n FROM outbox");
    // Three runs: their run.queued events and their commands (the copies are built from the events).
    expect([events.rows[0].n, outbox.rows[0].n]).toEqual([3, 3]);
  });

  it("refuses the key with another body (422 / 10430) and writes nothing", async () => {
    const before = await runsOf();
    const refused = await createRun(command("something else", "k-2")).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ValidationError);
    expect(refused).toMatchObject({ status: 422, code: 10430 });
    expect(await runsOf()).toEqual(before);
  });

  /** The route guard's decision in process (the real PDP); the policy service is never asked (acme has a set). */
  const decideWith = (pdp: Pdp) =>
    createGatewayDecisions({ pdp, policyService: { decide: () => Promise.reject(new Error("not asked")) } as unknown as PolicyDecisionApi });
  const newPdp = () => createPdp({ pool, policyDir: defaultPolicyDir, logger: createLogger("create-run-test", "silent") });
  const askCreate = (pdp: Pdp) =>
    decideWith(pdp)(
      { tenantId: "acme", userId: "alice", tokenRoles: ["member"], action: "agent.run.create", resource: { type: "run", id: "" }, context: {} },
      { deferRecord: true },
    );
  /** A permit as the route guard hands it over: the real PDP's decision, its record not yet written. */
  const permitFor = async (pdp = newPdp()): Promise<PendingPermit> => {
    const decided = await askCreate(pdp);
    expect(decided.permit).toBe(true);
    return decided.pending!;
  };
  describe("with the route's permit, its record not yet written (the gateway's in-process decision)", () => {
    const recorded = async () =>
      (await pool.query("SELECT action, permit, policy_version FROM policy_decisions WHERE user_id = 'alice' AND action = 'agent.run.create'")).rows;

    it("commits the permit's record in the run's statement: still one statement, one commit", async () => {
      const permit = await permitFor();
      expect(await transactionsOf(() => createRun({ ...command("permitted"), permit }))).toEqual({ commits: 1, rollbacks: 0, statements: 1 });
      expect(await recorded()).toEqual([{ action: "agent.run.create", permit: true, policy_version: 1 }]);
    });

    it("writes the record alone, once, for a retry answered with the run created first, and for a refused key", async () => {
      await createRun({ ...command("retried with a permit", "k-p"), permit: await permitFor() });
      expect(await recorded()).toHaveLength(2);
      await createRun({ ...command("retried with a permit", "k-p"), permit: await permitFor() });
      expect(await recorded()).toHaveLength(3);
      await expect(createRun({ ...command("another body", "k-p"), permit: await permitFor() })).rejects.toBeInstanceOf(ValidationError);
      expect(await recorded()).toHaveLength(4);
    });
  });

  describe("a permit decided on remembered roles (the PDP spares the membership read; the run's statement verifies it)", () => {
    const decisionsOfAlice = async () =>
      (await pool.query("SELECT permit, code FROM policy_decisions WHERE user_id = 'alice' AND action = 'agent.run.create' ORDER BY id")).rows;
    const runsNamed = async (input: string) =>
      (await pool.query("SELECT count(*)::int AS n FROM events WHERE type = 'run.queued' AND data->>'input' = $1", [input])).rows[0].n;
    /** A PDP that has read alice's roles once, and its next permit, decided on the roles it remembers. */
    const rememberedPermit = async () => {
      const pdp = newPdp();
      await permitFor(pdp);
      const permit = await permitFor(pdp);
      expect(permit.rememberedRoles).toEqual(["member"]);
      return { pdp, permit, decisionsBefore: (await decisionsOfAlice()).length };
    };

    it("commits with the run when the member still holds the roles: one statement, one commit", async () => {
      const { permit } = await rememberedPermit();
      expect(await transactionsOf(() => createRun({ ...command("remembered, unchanged"), permit }))).toEqual({ commits: 1, rollbacks: 0, statements: 1 });
      expect(await runsNamed("remembered, unchanged")).toBe(1);
    });

    it("a role revoked after the decision: the run's statement writes nothing, the decision made again denies, and only the deny is recorded", async () => {
      const { permit, decisionsBefore: before } = await rememberedPermit();
      await revokeRole(pool, "acme", "alice", "member", { userId: "root" });
      try {
        await expect(createRun({ ...command("revoked meanwhile"), permit })).rejects.toBeInstanceOf(ForbiddenError);
        expect(await runsNamed("revoked meanwhile")).toBe(0);
        expect((await decisionsOfAlice()).slice(before)).toEqual([{ permit: false, code: "60500" }]);
      } finally {
        await grantRole(pool, "acme", "alice", "member", { userId: "root" });
      }
    });

    it("roles changed but still permitting: the run is created once, with the permit decided again on the roles read now", async () => {
      const { pdp, permit, decisionsBefore: before } = await rememberedPermit();
      await grantRole(pool, "acme", "alice", "auditor", { userId: "root" });
      try {
        await createRun({ ...command("granted meanwhile"), permit });
        expect(await runsNamed("granted meanwhile")).toBe(1);
        expect((await decisionsOfAlice()).slice(before)).toEqual([{ permit: true, code: "" }]);
        // The roles read then are remembered: the next permit assumes them and commits at once.
        expect((await permitFor(pdp)).rememberedRoles).toEqual(["auditor", "member"]);
      } finally {
        await revokeRole(pool, "acme", "alice", "auditor", { userId: "root" });
      }
    });

    it("a permit written alone (a retry answered with its first run) is decided again when the roles changed", async () => {
      await createRun({ ...command("alone after a change", "k-r"), permit: await permitFor() });
      const { permit, decisionsBefore: before } = await rememberedPermit();
      await revokeRole(pool, "acme", "alice", "member", { userId: "root" });
      try {
        await expect(createRun({ ...command("alone after a change", "k-r"), permit })).rejects.toBeInstanceOf(ForbiddenError);
        expect((await decisionsOfAlice()).slice(before)).toEqual([{ permit: false, code: "60500" }]);
      } finally {
        await grantRole(pool, "acme", "alice", "member", { userId: "root" });
      }
    });
  });

  it("runs asked for at once share one statement and one commit, and each caller gets its own run", async () => {
    const inputs = Array.from({ length: 12 }, (_, i) => `together ${i}`);
    let answers: { id: string; state: string }[] = [];
    expect(await transactionsOf(async () => (answers = await Promise.all(inputs.map((input) => createRun(command(input))))))).toEqual({
      commits: 1,
      rollbacks: 0,
      statements: 1,
    });
    expect(new Set(answers.map((a) => a.id)).size).toBe(12);
    const { rows } = await pool.query("SELECT stream_id::text AS id, data->>'input' AS input FROM events WHERE stream_id = ANY($1::uuid[])", [
      answers.map((a) => a.id),
    ]);
    expect(new Map(rows.map((r) => [r.id, r.input]))).toEqual(new Map(answers.map((a, i) => [a.id, inputs[i]])));
  });

  it("a run whose data PostgreSQL refuses fails its own caller alone; the others asked for with it are created", async () => {
    const refused: PendingPermit = {
      row: {
        tenant_id: "acme",
        user_id: "alice",
        action: "agent.run.create",
        resource_type: "run",
        resource_id: "",
        permit: true,
        code: "",
        policy_ids: [],
        latency_ms: 0,
        mcp_mode: "no such mode",
      },
      rememberedRoles: null,
      write: () => Promise.resolve(),
      renew: () => Promise.reject(new Error("not renewed")),
    };
    const outcomes = await Promise.allSettled([
      createRun(command("asked with a refused record")),
      createRun({ ...command("refused record"), permit: refused }),
      createRun(command("asked with a refused record, too")),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(outcomes[1]).toMatchObject({ reason: { code: "23514" } });
    const { rows } = await pool.query("SELECT data->>'input' AS input FROM events WHERE data->>'input' LIKE '%refused record%' ORDER BY input");
    expect(rows.map((r) => r.input)).toEqual(["asked with a refused record", "asked with a refused record, too"]);
  });

  it("concurrent first uses of one key create one run, and every caller gets it", async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => createRun(command("raced", "k-3"))));
    expect(new Set(answers.map((a) => a.id)).size).toBe(1);
    expect((await runsOf()).filter((r) => r.idempotency_key === "k-3")).toHaveLength(1);
  });
});

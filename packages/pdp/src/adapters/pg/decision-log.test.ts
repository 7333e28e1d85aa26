import pg from "pg";
import { StaleRolesError, createPgDecisionLog, type DecisionEntry } from "./decision-log";
import { recordingPool, useFreshDatabase } from "../../../../../test/support/databases";
import { waitFor } from "../../../../../test/support/wait-for";

/**
 * Group commit of the decision log (one commit for the decisions of many POSTs): decisions arriving while a write is in flight are
 * written together, and each caller is answered only once its own row is committed.
 */
describe("the decision log writes concurrent decisions together, each answered once durable (real PostgreSQL)", () => {
  const db = useFreshDatabase("steward_policy_log");
  /** A connection of the test's own: locks the table, looks at rows and at the log's backend. */
  let observer: pg.Client;
  /** Every statement the log sent, in order. */
  const { pool: counted, statements } = recordingPool(() => db.pool);

  beforeAll(async () => {
    observer = new pg.Client({ connectionString: db.url });
    // The database is dropped (its sessions ended) by the hook registered before this file's own afterAll.
    observer.on("error", () => undefined);
    await observer.connect();
  });

  afterAll(async () => {
    await observer?.end();
  });

  beforeEach(() => void statements.splice(0));

  const entry = (resourceId: string, more: Partial<DecisionEntry> = {}): DecisionEntry => ({
    tenantId: "acme",
    userId: "alice",
    action: "agent.run.create",
    resourceType: "run",
    resourceId,
    runId: null,
    stepNo: null,
    fingerprint: null,
    elevationSessionId: null,
    permit: true,
    code: "",
    policyIds: ["member-runs"],
    policyVersion: 1,
    latencyMs: 0.25,
    ...more,
  });
  const written = async (prefix: string) =>
    (await observer.query("SELECT resource_id FROM policy_decisions WHERE resource_id LIKE $1 ORDER BY id", [`${prefix}%`])).rows.map((r) => r.resource_id);
  const inserts = () => statements.filter((s) => s.includes("INSERT INTO policy_decisions")).length;
  /** Settled states of promises, observed without waiting for them. */
  const track = (promises: Array<Promise<void>>) => {
    const states: Array<"pending" | "resolved" | Error> = promises.map(() => "pending");
    promises.forEach((p, i) =>
      p.then(
        () => void (states[i] = "resolved"),
        (err: Error) => void (states[i] = err),
      ),
    );
    return states;
  };
  /** Holds a lock that makes every INSERT into the log wait, until `release`. */
  async function blockWrites(): Promise<{ release(): Promise<void> }> {
    await observer.query("BEGIN");
    await observer.query("LOCK TABLE policy_decisions IN SHARE ROW EXCLUSIVE MODE");
    return { release: async () => void (await observer.query("COMMIT")) };
  }
  /** The log's backends stuck on that lock. */
  const blockedWriters = async () =>
    (
      await observer.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'
            AND query LIKE '%INSERT INTO policy_decisions%'`,
      )
    ).rows.map((r) => r.pid);

  it("writes every one of many concurrent decisions, in the order asked, with one statement", async () => {
    const log = createPgDecisionLog(counted);
    const runId = "00000000-0000-4000-8000-0000000000a1";
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        log.record(
          entry(
            `many-${String(i).padStart(2, "0")}`,
            i === 7 ? { runId, stepNo: 3, fingerprint: "f7", permit: false, code: "60500", policyIds: ["b", "a"], policyVersion: null } : {},
          ),
        ),
      ),
    );
    expect(inserts()).toBe(1);
    expect(await written("many-")).toEqual(Array.from({ length: 50 }, (_, i) => `many-${String(i).padStart(2, "0")}`));
    const [seventh] = await log.query("acme", { runId, limit: 10 });
    expect(seventh).toMatchObject({
      resource_id: "many-07",
      run_id: runId,
      step_no: 3,
      fingerprint: "f7",
      elevation_session_id: null,
      permit: false,
      code: "60500",
      policy_ids: ["b", "a"],
      policy_version: null,
      latency_ms: 0.25,
    });
  });

  it("names the MCP session and mode a decision was made for, and finds a session's decisions", async () => {
    const log = createPgDecisionLog(counted);
    const session = "00000000-0000-4000-8000-0000000000b1";
    await Promise.all([
      log.record(entry("mcp-1", { mcpSessionId: session, mcpMode: "execute" })),
      log.record(entry("mcp-2", { mcpSessionId: "not-a-session", mcpMode: "execute" })),
      log.record(entry("mcp-3", { mcpSessionId: session, mcpMode: "root" })),
      log.record(entry("mcp-4")),
    ]);
    const mine = await log.query("acme", { mcpSessionId: session, limit: 10 });
    expect(mine.map((r) => [r.resource_id, r.mcp_session_id, r.mcp_mode])).toEqual([
      ["mcp-1", session, "execute"],
      ["mcp-3", session, null],
    ]);
    expect(await log.query("acme", { mcpSessionId: "not-a-session", limit: 10 })).toEqual([]);
    expect(await written("mcp-")).toEqual(["mcp-1", "mcp-2", "mcp-3", "mcp-4"]);
  });

  it("bounds a statement at maxBatch decisions", async () => {
    const log = createPgDecisionLog(counted, { maxBatch: 8 });
    await Promise.all(Array.from({ length: 20 }, (_, i) => log.record(entry(`bounded-${i}`))));
    expect(inserts()).toBe(3);
    expect(await written("bounded-")).toHaveLength(20);
  });

  it("answers each caller only after its row is committed; those arriving meanwhile are written together next", async () => {
    const log = createPgDecisionLog(counted);
    const lock = await blockWrites();
    try {
      const first = track([log.record(entry("held-a"))]);
      await waitFor(async () => ((await blockedWriters()).length === 1 ? true : undefined), { timeoutMs: 10_000, what: "the first write to wait on the lock" });
      const later = [log.record(entry("held-b")), log.record(entry("held-c"))];
      const laterStates = track(later);
      // The write in flight is not committed: nobody is answered, and no other statement joined it.
      await new Promise((resolve) => setImmediate(resolve));
      expect([...first, ...laterStates]).toEqual(["pending", "pending", "pending"]);
      expect(inserts()).toBe(1);
      expect(await written("held-")).toEqual([]);
      // Every caller, when answered, finds its row committed (seen from another connection).
      const seenWhenAnswered = later.map((p, i) => p.then(async () => (await written(`held-${"bc"[i]}`)).length));
      await lock.release();
      expect(await Promise.all(seenWhenAnswered)).toEqual([1, 1]);
      expect(first).toEqual(["resolved"]);
      expect(inserts()).toBe(2);
      expect(await written("held-")).toEqual(["held-a", "held-b", "held-c"]);
    } finally {
      await observer.query("ROLLBACK").catch(() => undefined);
    }
  });

  it("a failed write rejects every caller in it; the callers queued behind it are written by the next", async () => {
    const log = createPgDecisionLog(counted);
    const lock = await blockWrites();
    try {
      const lost = track([log.record(entry("lost-a")), log.record(entry("lost-b"))]);
      const [writer] = await waitFor(
        async () => {
          const pids = await blockedWriters();
          return pids.length === 1 ? pids : undefined;
        },
        { timeoutMs: 10_000, what: "the write to wait on the lock" },
      );
      const next = log.record(entry("next-c"));
      await observer.query("SELECT pg_terminate_backend($1)", [writer]);
      await waitFor(() => (lost.every((s) => s !== "pending") ? true : undefined), { timeoutMs: 10_000, what: "the lost write's callers to be answered" });
      expect(lost.map((s) => (s instanceof Error ? (s as Error & { code?: string }).code : s))).toEqual(["57P01", "57P01"]);
      await lock.release();
      await expect(next).resolves.toBeUndefined();
      expect(await written("lost-")).toEqual([]);
      expect(await written("next-")).toEqual(["next-c"]);
    } finally {
      await observer.query("ROLLBACK").catch(() => undefined);
    }
  });

  it("an entry PostgreSQL cannot store fails only its own caller", async () => {
    const log = createPgDecisionLog(counted);
    const states = track([log.record(entry("mixed-a")), log.record(entry("mixed-b", { userId: "nul\u0000" })), log.record(entry("mixed-c"))]);
    await waitFor(() => (states.every((s) => s !== "pending") ? true : undefined), { timeoutMs: 10_000, what: "every caller to be answered" });
    expect(states[0]).toBe("resolved");
    expect((states[1] as Error & { code?: string }).code).toMatch(/^22/);
    expect(states[2]).toBe("resolved");
    expect(await written("mixed-")).toEqual(["mixed-a", "mixed-c"]);
  });

  it("writes an entry made on remembered roles only while the membership holds exactly them; the batch's others are written", async () => {
    const log = createPgDecisionLog(counted);
    await observer.query("INSERT INTO memberships (tenant_id, user_id, roles) VALUES ('acme', 'erin', '{member}'), ('acme', 'fred', '{admin,member}')");
    const states = track([
      log.record(entry("remembered-a", { userId: "erin", rememberedRoles: ["member"] })),
      // Fred's roles changed since they were remembered, and nobody was ever seen as "ghost".
      log.record(entry("remembered-b", { userId: "fred", rememberedRoles: ["member"] })),
      log.record(entry("remembered-c", { userId: "ghost", rememberedRoles: ["member"] })),
      log.record(entry("remembered-d", { userId: "fred" })),
      log.record(entry("remembered-e", { userId: "fred", rememberedRoles: ["admin", "member"] })),
    ]);
    await waitFor(() => (states.every((s) => s !== "pending") ? true : undefined), { timeoutMs: 10_000, what: "every caller to be answered" });
    expect(states.map((s) => (s instanceof Error ? s.name : s))).toEqual(["resolved", "StaleRolesError", "StaleRolesError", "resolved", "resolved"]);
    expect(states[1]).toBeInstanceOf(StaleRolesError);
    expect(inserts()).toBe(1);
    expect(await written("remembered-")).toEqual(["remembered-a", "remembered-d", "remembered-e"]);
  });

  it("refuses an entry whose roles were changed by a commit after the decision, before its record", async () => {
    const log = createPgDecisionLog(counted);
    await observer.query("INSERT INTO memberships (tenant_id, user_id, roles) VALUES ('acme', 'gina', '{member}')");
    const decidedOn = ["member"];
    await observer.query("UPDATE memberships SET roles = '{}' WHERE tenant_id = 'acme' AND user_id = 'gina'");
    await expect(log.record(entry("revoked-a", { userId: "gina", rememberedRoles: decidedOn }))).rejects.toBeInstanceOf(StaleRolesError);
    await expect(log.record(entry("revoked-b", { userId: "gina", rememberedRoles: [] }))).resolves.toBeUndefined();
    expect(await written("revoked-")).toEqual(["revoked-b"]);
  });
});

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createLogger, createPool, type Pool } from "@steward/platform";
import { grantRole, listMembershipChanges, revokeRole } from "@steward/store";
import { createCedarEngine } from "../adapters/cedar/engine";
import { createPgPolicyFacts } from "../adapters/pg/facts";
import { createPgPolicySetStore } from "../adapters/pg/policy-sets";
import { createPgDecisionLog } from "../adapters/pg/decision-log";
import { createActiveSets } from "./active-sets";
import { defaultPolicyDir } from "./create-pdp";
import { createDecisionHandler, type DecisionHandler, type DecisionQuery } from "./decide-request";
import { createKnownRoles } from "./known-roles";
import { freshDatabase } from "../../../../test/support/databases";

/**
 * Roles are facts at decision time (docs/policy.md, "Facts at decision time"): every decision, route or tool call,
 * uses the membership as it stands; a token's roles seed a membership once, at the user's first sight in the
 * tenant. The roles are remembered between decisions, and each record verifies them: a change is still seen by the
 * very next decision.
 */
describe("the PDP decides with the membership of this moment (real PostgreSQL, the shipped Cedar set)", () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: Pool;
  let decide: DecisionHandler;
  const root = { userId: "root" };

  beforeAll(async () => {
    db = await freshDatabase("steward_policy_roles");
    pool = createPool(db.url, { max: 6 });
    const engine = createCedarEngine(readFileSync(join(defaultPolicyDir, "schema.cedarschema"), "utf8"), { preparedSets: 8 });
    const defaultText = readFileSync(join(defaultPolicyDir, "default.cedar"), "utf8");
    const sets = createActiveSets({ store: createPgPolicySetStore(pool), engine, defaultSet: engine.validate(defaultText), defaultText });
    const facts = createPgPolicyFacts(pool);
    // Roles remembered between decisions, as the PDP runs: every record verifies them.
    decide = createDecisionHandler({
      facts,
      roles: createKnownRoles(facts, 100),
      sets,
      engine,
      log: createPgDecisionLog(pool),
      logger: createLogger("policy-test", "silent"),
    });
  });

  afterAll(async () => {
    await pool?.end();
    if (db) await db.drop();
  });

  /** A route's question: the gateway passes the verified token's roles (run routes name a run, admin routes a resource). */
  const route = (tenantId: string, userId: string, tokenRoles: string[], action = "agent.run.create") =>
    decide({
      tenantId,
      userId,
      tokenRoles,
      action,
      resource: action.startsWith("agent.run.") ? { type: "run", id: "" } : { type: "resource", id: action },
      context: {},
    });
  /** A tool call's question: tool-exec has no token, only the run's tenant and user. */
  const toolCall = (tenantId: string, userId: string, runId: string, stepNo: number): ReturnType<DecisionHandler> =>
    decide({
      tenantId,
      userId,
      tokenRoles: null,
      action: "knowledge.document.read",
      resource: { type: "tool", id: "knowledge_search" },
      context: { run_id: runId, step_no: String(stepNo) },
    } satisfies DecisionQuery);
  const rolesOf = async (tenantId: string, userId: string) =>
    (await pool.query("SELECT roles FROM memberships WHERE tenant_id = $1 AND user_id = $2", [tenantId, userId])).rows[0]?.roles;

  it("seeds a new user's membership from their token's roles and records the seeding", async () => {
    expect(await route("acme", "alice", ["member", "member"])).toMatchObject({ permit: true, policyIds: ["member-runs"] });
    expect(await rolesOf("acme", "alice")).toEqual(["member"]);
    const changes = await listMembershipChanges(pool, "acme", { userId: "alice", limit: 10 });
    expect(changes.map((c) => [c.change, c.role, c.roles, c.changed_by])).toEqual([["seeded", null, ["member"], "alice"]]);
  });

  it("never widens a membership from a later token: a member whose token claims admin is still a member", async () => {
    expect(await route("acme", "alice", ["admin"], "policy.admin")).toMatchObject({ permit: false, code: "60500" });
    expect(await rolesOf("acme", "alice")).toEqual(["member"]);
    expect(await listMembershipChanges(pool, "acme", { userId: "alice", limit: 10 })).toHaveLength(1);
  });

  it("a revoked role is gone from the very next decision, route or tool call, whatever the token still says", async () => {
    const runId = "00000000-0000-4000-8000-0000000000c1";
    await route("acme", "carol", ["member"]);
    expect(await toolCall("acme", "carol", runId, 1)).toMatchObject({ permit: true });
    await revokeRole(pool, "acme", "carol", "member", root);
    expect(await toolCall("acme", "carol", runId, 2)).toMatchObject({ permit: false, code: "60500" });
    expect(await route("acme", "carol", ["member"])).toMatchObject({ permit: false, code: "60500" });
    expect(await rolesOf("acme", "carol")).toEqual([]);
    const { rows } = await pool.query("SELECT step_no, permit, code FROM policy_decisions WHERE run_id = $1 ORDER BY id", [runId]);
    expect(rows).toEqual([
      { step_no: 1, permit: true, code: "" },
      { step_no: 2, permit: false, code: "60500" },
    ]);
  });

  it("a granted role counts from the very next decision", async () => {
    expect(await route("acme", "dave", [], "audit.decision.read")).toMatchObject({ permit: false });
    await grantRole(pool, "acme", "dave", "admin", root);
    expect(await route("acme", "dave", [], "audit.decision.read")).toMatchObject({ permit: true, policyIds: ["admin-all"] });
    expect(await route("acme", "dave", [], "membership.admin")).toMatchObject({ permit: true, policyIds: ["admin-all"] });
  });

  it("a tool call of a user never seen reads no roles and seeds nothing", async () => {
    expect(await toolCall("acme", "stranger", "00000000-0000-4000-8000-0000000000c2", 1)).toMatchObject({ permit: false, code: "60500" });
    expect(await rolesOf("acme", "stranger")).toBeUndefined();
  });

  it("a user's membership is per tenant: seeding or revoking in one tenant leaves the other alone", async () => {
    await route("globex", "carol", ["member"]);
    expect(await rolesOf("globex", "carol")).toEqual(["member"]);
    expect(await rolesOf("acme", "carol")).toEqual([]);
    expect(await toolCall("globex", "carol", "00000000-0000-4000-8000-0000000000c3", 1)).toMatchObject({ permit: true });
  });

  it("concurrent first decisions for one new user agree on one membership and record one seeding", async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => route("initech", "racer", i % 2 ? ["admin"] : ["member"], "policy.admin")));
    expect(new Set(answers.map((a) => a.permit)).size).toBe(1);
    expect(await listMembershipChanges(pool, "initech", { userId: "racer", limit: 10 })).toHaveLength(1);
  });
});

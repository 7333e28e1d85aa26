import { readFileSync } from "node:fs";
import { join } from "node:path";
import { entitiesFor, resourceUid } from "../../domain/entities";
import * as wasm from "@cedar-policy/cedar-wasm/nodejs";
import { createCedarEngine, type PreparedPolicySet } from "./engine";

// Cedar itself, counted: the engine's calls into it go through this wrapper.
jest.mock("@cedar-policy/cedar-wasm/nodejs", () => {
  const actual = jest.requireActual("@cedar-policy/cedar-wasm/nodejs");
  return { ...actual, statefulIsAuthorized: jest.fn(actual.statefulIsAuthorized) };
});
const cedarCalls = wasm.statefulIsAuthorized as jest.Mock;

const dir = join(__dirname, "..", "..", "..", "..", "..", "infra", "policies");
const engine = createCedarEngine(readFileSync(join(dir, "schema.cedarschema"), "utf8"));
const defaults = readFileSync(join(dir, "default.cedar"), "utf8");

const prepared = new Map<string, PreparedPolicySet>();

function ask(key: string, roles: string[], action: string, opts: { tool?: string; safety?: string; elevated?: boolean } = {}) {
  const resource = opts.tool ? { type: "tool", id: opts.tool } : { type: "run", id: "" };
  return engine.authorize(prepared.get(key) as PreparedPolicySet, {
    principal: { type: "Steward::User", id: "u1" },
    action,
    resource: resourceUid(resource.type, resource.id),
    context: { elevated: opts.elevated ?? false, run_id: "", step_no: 0 },
    entities: entitiesFor({ tenantId: "t1", userId: "u1", roles, resource, toolSafety: opts.safety }),
  });
}

describe("the Cedar engine", () => {
  beforeAll(() => {
    const set = engine.validate(defaults);
    expect(set.valid).toBe(true);
    prepared.set("t1@1", engine.prepare("t1@1", set));
  });

  it("permits by a named policy", () => {
    expect(ask("t1@1", ["member"], "agent.run.create")).toEqual({ permit: true, policyIds: ["member-runs"], errors: [], erroredPolicyIds: [] });
  });

  it("denies what no policy permits", () => {
    expect(ask("t1@1", ["member"], "policy.admin")).toMatchObject({ permit: false, policyIds: [] });
    expect(ask("t1@1", [], "agent.run.read")).toMatchObject({ permit: false });
  });

  it("lets an elevation grant what the roles do not", () => {
    expect(ask("t1@1", ["member"], "knowledge.document.write", { tool: "delete_docs" })).toMatchObject({ permit: false });
    expect(ask("t1@1", ["member"], "knowledge.document.write", { tool: "delete_docs", elevated: true })).toMatchObject({
      permit: true,
      policyIds: ["elevation-grants"],
    });
    expect(ask("t1@1", ["member"], "knowledge.document.write", { tool: "save_note" })).toMatchObject({ permit: true, policyIds: ["member-save-notes"] });
  });

  it("lets members open Observe and Execute MCP sessions and only admins Admin ones; a policy may test the session's mode", () => {
    const session = (key: string, roles: string[], mode: string, context: Record<string, string> = {}) =>
      engine.authorize(prepared.get(key) as PreparedPolicySet, {
        principal: { type: "Steward::User", id: "u1" },
        action: "agent.mcp.session",
        resource: resourceUid("resource", mode),
        context: { elevated: false, run_id: "", step_no: 0, ...context },
        entities: entitiesFor({ tenantId: "t1", userId: "u1", roles, resource: { type: "resource", id: mode } }),
      });
    expect(session("t1@1", ["member"], "observe")).toMatchObject({ permit: true, policyIds: ["member-mcp-sessions"] });
    expect(session("t1@1", ["member"], "execute")).toMatchObject({ permit: true, policyIds: ["member-mcp-sessions"] });
    expect(session("t1@1", ["member"], "admin")).toMatchObject({ permit: false, policyIds: [] });
    expect(session("t1@1", ["admin"], "admin")).toMatchObject({ permit: true, policyIds: ["admin-all"] });

    const set = engine.validate(
      `${defaults}\n@id("no-runs-from-observe")\nforbid (principal, action == Steward::Action::"agent.run.create", resource) when { context has mcp_mode && context.mcp_mode == "observe" };`,
    );
    expect(set.valid).toBe(true);
    prepared.set("t1@mcp", engine.prepare("t1@mcp", set));
    const create = (context: Record<string, string | boolean | number>) =>
      engine.authorize(prepared.get("t1@mcp") as PreparedPolicySet, {
        principal: { type: "Steward::User", id: "u1" },
        action: "agent.run.create",
        resource: resourceUid("run", ""),
        context: { elevated: false, run_id: "", step_no: 0, ...context },
        entities: entitiesFor({ tenantId: "t1", userId: "u1", roles: ["member"], resource: { type: "run", id: "" } }),
      });
    expect(create({})).toMatchObject({ permit: true });
    expect(create({ mcp_session: "s1", mcp_mode: "execute" })).toMatchObject({ permit: true });
    expect(create({ mcp_session: "s1", mcp_mode: "observe" })).toMatchObject({ permit: false, policyIds: ["no-runs-from-observe"] });
  });

  it("forbids every write tool in an Observe session, admins and elevations included; reads, and other modes, as before", () => {
    const tool = (roles: string[], action: string, name: string, safety: string, context: Record<string, string | boolean> = {}) =>
      engine.authorize(prepared.get("t1@1") as PreparedPolicySet, {
        principal: { type: "Steward::User", id: "u1" },
        action,
        resource: resourceUid("tool", name),
        context: { elevated: false, run_id: "r1", step_no: 0, ...context },
        entities: entitiesFor({ tenantId: "t1", userId: "u1", roles, resource: { type: "tool", id: name }, toolSafety: safety }),
      });
    const observe = { mcp_session: "s1", mcp_mode: "observe" };
    const denied = { permit: false, policyIds: ["mcp-observe-reads-only"], errors: [], erroredPolicyIds: [] };
    expect(tool(["member"], "knowledge.document.write", "save_note", "write", observe)).toEqual(denied);
    expect(tool(["admin"], "knowledge.document.write", "delete_docs", "write", observe)).toEqual(denied);
    expect(tool(["member"], "knowledge.document.write", "delete_docs", "write", { ...observe, elevated: true })).toEqual(denied);
    // A read in Observe, and the same write in Execute or outside MCP, are decided by the permits alone.
    expect(tool(["member"], "knowledge.document.read", "knowledge_search", "read", observe)).toMatchObject({
      permit: true,
      policyIds: ["member-knowledge-read"],
    });
    expect(tool(["member"], "knowledge.document.write", "save_note", "write", { mcp_session: "s1", mcp_mode: "execute" })).toMatchObject({
      permit: true,
      policyIds: ["member-save-notes"],
    });
    expect(tool(["member"], "knowledge.document.write", "save_note", "write")).toMatchObject({ permit: true, policyIds: ["member-save-notes"] });
  });

  it("lets a forbid override a permit, and names the forbid", () => {
    const set = engine.validate(
      `${defaults}\n@id("no-write-tools-for-contractors")\nforbid (principal in Steward::Role::"contractor", action, resource is Steward::Tool) when { resource.safety == "write" };`,
    );
    expect(set.valid).toBe(true);
    prepared.set("t1@2", engine.prepare("t1@2", set));
    const writeTool = { tool: "save_note", safety: "write" };
    expect(ask("t1@2", ["admin"], "knowledge.document.write", writeTool)).toMatchObject({ permit: true });
    expect(ask("t1@2", ["admin", "contractor"], "knowledge.document.write", writeTool)).toEqual({
      permit: false,
      policyIds: ["no-write-tools-for-contractors"],
      errors: [],
      erroredPolicyIds: [],
    });
  });

  it("names a forbid whose condition overflows: Cedar skips it and its permit alone would allow", () => {
    const set = engine.validate(
      `${defaults}\n@id("overflowing-forbid")\nforbid (principal, action, resource) when { context.step_no + 9223372036854775807 + 1 > 0 };`,
    );
    expect(set.valid).toBe(true); // the validator types it; only evaluation finds the overflow
    prepared.set("t1@3", engine.prepare("t1@3", set));
    const answer = ask("t1@3", ["member"], "agent.run.read");
    expect(answer).toMatchObject({ permit: true, policyIds: ["member-runs"], erroredPolicyIds: ["overflowing-forbid"] });
    expect(answer.errors[0]).toMatch(/^overflowing-forbid: .*overflow/);
  });

  it("with more sets than `preparedSets` slots, refills the least recently used slot and never answers from another set's policies", () => {
    // No answers remembered: every decision goes to Cedar, through the slots.
    const small = createCedarEngine(readFileSync(join(dir, "schema.cedarschema"), "utf8"), { preparedSets: 2, rememberedAnswers: 0 });
    const only = (id: string, effect: "permit" | "forbid") => small.validate(`${defaults}\n@id("${id}")\n${effect} (principal, action, resource);`);
    const sets = [small.prepare("a@1", only("all-a", "permit")), small.prepare("b@1", only("none-b", "forbid")), small.prepare("c@1", only("all-c", "permit"))];
    const decide = (i: number) =>
      small.authorize(sets[i], {
        principal: { type: "Steward::User", id: "u1" },
        action: "agent.run.read",
        resource: resourceUid("run", ""),
        context: { elevated: false, run_id: "", step_no: 0 },
        entities: entitiesFor({ tenantId: "t1", userId: "u1", roles: [], resource: { type: "run", id: "" } }),
      });
    // Three sets through two slots, in an order that refills every slot several times.
    for (const i of [0, 1, 2, 0, 2, 1, 1, 0, 2, 1]) {
      const answer = decide(i);
      expect([i, answer.permit, answer.policyIds]).toEqual([i, i !== 1, [["all-a"], ["none-b"], ["all-c"]][i]]);
    }
  });

  it("does not evaluate an action outside the schema", () => {
    const answer = ask("t1@1", ["admin"], "rm.rf");
    expect(answer.permit).toBe(false);
    expect(answer.errors.length).toBeGreaterThan(0);
  });

  it("rejects at upload a policy the schema does not allow, naming it", () => {
    const report = engine.validate(`@id("typo")\npermit (principal, action == Steward::Action::"agent.run.destroy", resource);`);
    expect(report.valid).toBe(false);
    expect(report.issues[0]).toMatchObject({ policyId: "typo" });
    expect(report.issues[0].message).toMatch(/agent\.run\.destroy/);
  });

  it("rejects a policy without an @id, a duplicate @id, unparsable text and an empty set", () => {
    expect(engine.validate(`permit (principal, action, resource);`).issues[0].message).toMatch(/@id/);
    const twice = `@id("a")\npermit (principal, action, resource);\n@id("a")\nforbid (principal, action, resource);`;
    expect(engine.validate(twice).issues[0].message).toMatch(/twice/);
    expect(engine.validate("permit (principal,").valid).toBe(false);
    expect(engine.validate("// nothing").valid).toBe(false);
  });

  describe("remembered answers", () => {
    beforeEach(() => cedarCalls.mockClear());
    /** A member's question about runs, at a step, elevated or not (the default set reads `elevated`, never the step). */
    const runRequest = (action: string, stepNo: number, roles = ["member"], elevated = false) => ({
      principal: { type: "Steward::User", id: "u1" },
      action,
      resource: resourceUid("run", ""),
      context: { elevated, run_id: "", step_no: stepNo },
      entities: entitiesFor({ tenantId: "t9", userId: "u1", roles, resource: { type: "run", id: "" } }),
    });
    const schema = readFileSync(join(dir, "schema.cedarschema"), "utf8");

    it("answers a request asked before of the same set without Cedar; another request, or another set, goes to Cedar", () => {
      const mine = createCedarEngine(schema, { rememberedAnswers: 8 });
      const set = mine.validate(defaults);
      const v1 = mine.prepare("t9@1", set);
      const v2 = mine.prepare(
        "t9@2",
        mine.validate(`${defaults}\n@id("no-runs")\nforbid (principal, action == Steward::Action::"agent.run.create", resource);`),
      );
      const create = (stepNo: number, elevated = false) => runRequest("agent.run.create", stepNo, ["member"], elevated);
      const first = mine.authorize(v1, create(0));
      expect(first).toMatchObject({ permit: true, policyIds: ["member-runs"] });
      (first.policyIds as string[]).length = 0; // the caller's copy: what is remembered stays whole
      expect(mine.authorize(v1, create(0))).toEqual({ permit: true, policyIds: ["member-runs"], errors: [], erroredPolicyIds: [] });
      expect(cedarCalls).toHaveBeenCalledTimes(1);
      expect(mine.authorize(v1, create(0, true))).toMatchObject({ permit: true });
      expect(mine.authorize(v2, create(0))).toMatchObject({ permit: false, policyIds: ["no-runs"] });
      expect(cedarCalls).toHaveBeenCalledTimes(3);
      // A member with other roles is another request.
      expect(mine.authorize(v1, runRequest("agent.run.create", 0, []))).toMatchObject({ permit: false });
      expect(cedarCalls).toHaveBeenCalledTimes(4);
    });

    it("given a set that never reads the step, then another step is the same question; a set that reads it asks Cedar for each", () => {
      const mine = createCedarEngine(schema, { rememberedAnswers: 8 });
      const plain = mine.prepare("t9@1", mine.validate(defaults));
      expect(plain.contextReads).not.toBe("whole");
      expect([1, 2, 3].map((step) => mine.authorize(plain, runRequest("agent.run.create", step)).permit)).toEqual([true, true, true]);
      expect(cedarCalls).toHaveBeenCalledTimes(1);
      // A value of another type is checked by Cedar against the schema, read or not: not the same question.
      const refused = mine.authorize(plain, { ...runRequest("agent.run.create", 1), context: { elevated: false, run_id: "", step_no: "one" } as never });
      expect(refused.permit).toBe(false);
      expect(cedarCalls).toHaveBeenCalledTimes(2);

      cedarCalls.mockClear();
      const budget = mine.prepare("t9@3", mine.validate(`${defaults}\n@id("few-steps")\nforbid (principal, action, resource) when { context.step_no > 2 };`));
      expect([1, 2, 3, 2].map((step) => mine.authorize(budget, runRequest("agent.run.create", step)).permit)).toEqual([true, true, false, true]);
      expect(cedarCalls).toHaveBeenCalledTimes(3);
    });

    it("remembers at most `rememberedAnswers`, and none with 0", () => {
      const asking = (roles: string[]) => runRequest("agent.run.read", 0, roles);
      const [a, b, c] = [["member"], ["admin"], []];
      const two = createCedarEngine(schema, { rememberedAnswers: 2 });
      const onTwo = two.prepare("t9@1", two.validate(defaults));
      for (const roles of [a, b, a, b, c, a]) two.authorize(onTwo, asking(roles)); // c pushes out a
      expect(cedarCalls).toHaveBeenCalledTimes(4);
      cedarCalls.mockClear();
      const none = createCedarEngine(schema, { rememberedAnswers: 0 });
      const onNone = none.prepare("t9@1", none.validate(defaults));
      for (let i = 0; i < 3; i++) none.authorize(onNone, asking(a));
      expect(cedarCalls).toHaveBeenCalledTimes(3);
    });
  });
});

describe("a set nesting too deep for Cedar's stack", () => {
  const deep = (n: number) => `@id("deep")\npermit (principal, action, resource) when { ${"(".repeat(n)}true${")".repeat(n)} };`;

  it("is refused before Cedar parses it, and the engine goes on serving every tenant", () => {
    // 10,000 nested parentheses overflowed the stack inside Cedar's module and broke it for every later call.
    expect(engine.validate(deep(10_000))).toMatchObject({ valid: false, issues: [{ policyId: "", message: expect.stringContaining("nests deeper than 32") }] });
    expect(engine.validate(`@id("long")\npermit (principal, action, resource) when { ${Array(3000).fill("1").join(" + ")} > 0 };`)).toMatchObject({
      valid: false,
    });
    expect(engine.validate(defaults).valid).toBe(true);
    expect(ask("t1@1", ["member"], "agent.run.create").permit).toBe(true);
    expect(engine.validate(deep(20)).valid).toBe(true);
  });
});

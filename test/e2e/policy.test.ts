import pg from "pg";
import { addDocument } from "@steward/store";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { startFakeOpenAi, type ChatRequest, type FakeOpenAi, type Reply } from "../support/fake-openai";
import { eventsOf, runToEnd } from "../support/runs";
import { waitFor } from "../support/wait-for";

jest.setTimeout(180_000);

/** A latch a scripted model answer can wait on, so the test can act between two tool calls of one run. */
function latch() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe("the Cedar PDP decides every tool call and route with the facts of the moment", () => {
  let platform: TestPlatform;
  let model: FakeOpenAi;
  let pool: pg.Pool;
  let admin: string;
  const gates = { elevation: latch(), policyDown: latch() };
  const reachedSecondCall = { elevation: latch(), policyDown: latch() };

  function script(req: ChatRequest): Reply | Promise<Reply> {
    const input = String(req.messages.find((m) => m.role === "user")?.content);
    const turn = req.messages.filter((m) => m.role === "tool").length;
    const call = (name: string, args: unknown): Reply => ({ toolCalls: [{ id: `c${turn}`, name, arguments: JSON.stringify(args) }] });
    if (input.startsWith("search"))
      return turn === 0 ? call("knowledge_search", { query: "refund" }) : { text: `done: ${req.messages[req.messages.length - 1].content}` };
    if (input.startsWith("witness")) return turn === 0 ? call("test_witness", {}) : { text: "witnessed" };
    if (input.startsWith("elevated")) {
      if (turn === 0) return call("test_guarded", { note: "first" });
      if (turn === 1) {
        reachedSecondCall.elevation.open();
        return gates.elevation.opened.then(() => call("test_guarded", { note: "second" }));
      }
      return { text: "should not get here" };
    }
    if (input.startsWith("pdp-down")) {
      if (turn === 0) {
        reachedSecondCall.policyDown.open();
        return gates.policyDown.opened.then(() => call("test_counter", { key: "while-down" }));
      }
      return { text: "carried on without the tool" };
    }
    return { text: "ok" };
  }

  beforeAll(async () => {
    model = await startFakeOpenAi(script);
    // The runner rides out an unreachable PDP for RUNNER_TOOL_RETRY_MS before the fail-closed deny stands.
    platform = await startTestPlatform({ LLM_BASE_URL: model.baseUrl, LLM_API_KEY: "sk-test", LLM_MODEL: "fake", RUNNER_TOOL_RETRY_MS: "1000" });
    pool = new pg.Pool({ connectionString: platform.databaseUrl });
    await addDocument(pool, { tenantId: "acme", title: "Refund policy", body: "Refunds within 30 days." });
    admin = await platform.token({ tenant: "acme", user: "root", roles: ["admin"] });
  });

  afterAll(async () => {
    gates.elevation.open();
    gates.policyDown.open();
    await pool?.end();
    await platform?.teardown();
    await model?.close();
  });

  it("lets an administrator upload, dry-run and activate a set; a schema-invalid set is refused with 422", async () => {
    const bad = await platform.http("POST", "/v1/admin/policies", {
      token: admin,
      body: { policies: '@id("x")\npermit (principal, action == Steward::Action::"agent.run.nuke", resource);' },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.code).toBe(10430);
    expect(bad.body.detail).toContain("agent.run.nuke");

    const current = await platform.http("GET", "/v1/admin/policies", { token: admin });
    const base = current.body.items.find((s: { status: string }) => s.status === "active").policies;
    const stricter = `${base}\n@id("auditors-read-nothing")\nforbid (principal in Steward::Role::"auditor", action == Steward::Action::"knowledge.document.read", resource);\n@id("suspended-create-nothing")\nforbid (principal in Steward::Role::"suspended", action == Steward::Action::"agent.run.create", resource);`;
    const draft = await platform.http("POST", "/v1/admin/policies", { token: admin, body: { policies: stricter } });
    expect(draft.status).toBe(201);
    expect(draft.body).toMatchObject({ version: 2, status: "draft" });

    const dry = await platform.http("POST", "/v1/admin/policies/dry-run", {
      token: admin,
      body: { version: 2, user_id: "ann", roles: ["member", "auditor"], action: "knowledge.document.read", resource: { type: "tool", id: "knowledge_search" } },
    });
    expect(dry.body).toEqual({ permit: false, code: "60500", policy_ids: ["auditors-read-nothing"], version: 2, errors: [] });

    const member = await platform.token({ tenant: "acme", user: "mia" });
    expect((await platform.http("POST", "/v1/admin/policies/2/activate", { token: member })).status).toBe(403);
    const activated = await platform.http("POST", "/v1/admin/policies/2/activate", { token: admin });
    expect(activated.body).toMatchObject({ version: 2, status: "active" });
  });

  it("pages a tenant's policy sets, newest first, however large they are: every version is listed, none twice", async () => {
    const owner = await platform.token({ tenant: "bulky", user: "bo", roles: ["admin"] });
    const first = await platform.http("GET", "/v1/admin/policies", { token: owner });
    const base = first.body.items[0].policies as string;
    // 22 sets of about 195 KiB each (the largest a set may be is 200,000 characters): together more than one gRPC
    // message (4 MiB) or one answer should hold.
    const padding = `// ${"p".repeat(120)}\n`.repeat(Math.floor((195 * 1024 - base.length) / 124));
    for (let i = 0; i < 22; i++) {
      const uploaded = await platform.http("POST", "/v1/admin/policies", { token: owner, body: { policies: `// set ${i}\n${padding}${base}` } });
      expect(uploaded.status).toBe(201);
    }
    const versions: number[] = [];
    let query = "";
    for (let pages = 0; pages < 5; pages++) {
      const page = await platform.http("GET", `/v1/admin/policies${query}`, { token: owner });
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(10);
      versions.push(...page.body.items.map((s: { version: number }) => s.version));
      if (page.body.next_before === null) break;
      query = `?before=${page.body.next_before}`;
    }
    expect(versions).toEqual(Array.from({ length: 23 }, (_, i) => 23 - i));
    const small = await platform.http("GET", "/v1/admin/policies?limit=2", { token: owner });
    expect(small.body).toMatchObject({ items: [{ version: 23 }, { version: 22 }], next_before: 22 });
    expect((await platform.http("GET", "/v1/admin/policies?limit=11", { token: owner })).status).toBe(400);
  });

  it("refuses a set nesting deeper than Cedar's stack takes, and the policy service goes on deciding for every tenant", async () => {
    // 10,000 nested parentheses overflowed the stack inside Cedar's module, which then failed every later call.
    const deep = `@id("deep")\npermit (principal, action, resource) when { ${"(".repeat(10_000)}true${")".repeat(10_000)} };`;
    const checked = await platform.http("POST", "/v1/admin/policies/validate", { token: admin, body: { policies: deep } });
    expect(checked.body).toMatchObject({ valid: false, issues: [{ message: expect.stringContaining("nests deeper than 32") }] });
    const uploaded = await platform.http("POST", "/v1/admin/policies", { token: admin, body: { policies: deep } });
    expect(uploaded.status).toBe(422);
    // A tenant never seen before: the policy service installs its default set, parsed by the same module.
    const newcomer = await platform.token({ tenant: "newcomer", user: "nia" });
    expect((await platform.http("GET", "/v1/agents/runs", { token: newcomer })).status).toBe(200);
  });

  it("a dry run of a set whose forbid errors answers the deny a live call would get: 60503, naming the policy", async () => {
    const active = (await platform.http("GET", "/v1/admin/policies", { token: admin })).body.items.find((s: { status: string }) => s.status === "active");
    const erroring = `${active.policies}\n@id("overflowing-forbid")\nforbid (principal, action == Steward::Action::"knowledge.document.read", resource) when { context.step_no + 9223372036854775807 + 1 > 0 };`;
    const draft = await platform.http("POST", "/v1/admin/policies", { token: admin, body: { policies: erroring } });
    expect(draft.status).toBe(201);
    const dryRun = (action: string) =>
      platform.http("POST", "/v1/admin/policies/dry-run", {
        token: admin,
        body: { version: draft.body.version, user_id: "mia", roles: ["member"], action, resource: { type: "tool", id: "knowledge_search" } },
      });
    // Cedar alone would skip the erroring forbid and let member-knowledge-read permit.
    const denied = await dryRun("knowledge.document.read");
    expect(denied.status).toBe(200);
    expect(denied.body).toEqual({
      permit: false,
      code: "60503",
      policy_ids: ["overflowing-forbid"],
      version: draft.body.version,
      errors: [expect.stringMatching(/^overflowing-forbid: .*overflow/)],
    });
    // A permit carries no code, as in the decision log.
    expect((await dryRun("dataset.read")).body).toMatchObject({ permit: true, code: null, errors: [] });
  });

  it("permits a tool for one role and forbids it for another, and the model is told of the denial", async () => {
    const member = await platform.token({ tenant: "acme", user: "mia" });
    const auditor = await platform.token({ tenant: "acme", user: "ann", roles: ["member", "auditor"] });
    const allowed = await runToEnd(platform, member, "search as member");
    expect(allowed.state).toBe("succeeded");
    expect(allowed.output.evidence[0].title).toBe("Refund policy");
    const denied = await runToEnd(platform, auditor, "search as auditor");
    expect(denied.state).toBe("succeeded");
    expect(denied.output.evidence).toEqual([]);
    const events = await eventsOf(platform, auditor, denied.id);
    const decided = events.find((e) => e.type === "tool.decided");
    expect(decided?.data).toMatchObject({ permit: false, code: "60500", policy_ids: ["auditors-read-nothing"], policy_point: "knowledge.document.read" });
    expect(events.find((e) => e.type === "tool_result")?.data.result_code).toBe("60500");
  });

  it("a route the PDP denies answers 403/10031", async () => {
    const suspended = await platform.token({ tenant: "acme", user: "sam", roles: ["member", "suspended"] });
    const res = await platform.http("POST", "/v1/agents/runs", { token: suspended, body: { input: "hi" } });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe(10031);
  });

  it("a run's creation is decided by the gateway and recorded once: with the run, or before a refusal of its input", async () => {
    const member = await platform.token({ tenant: "acme", user: "rita" });
    const creations = async () =>
      (await pool.query("SELECT permit, policy_version FROM policy_decisions WHERE user_id = 'rita' AND action = 'agent.run.create'")).rows;
    const created = await platform.http("POST", "/v1/agents/runs", { token: member, body: { input: "recorded with the run" } });
    expect(created.status).toBe(201);
    expect(await creations()).toEqual([{ permit: true, policy_version: expect.any(Number) }]);
    // Refused after the permit (the body's schema is checked after the route's policy): the record is still kept.
    const refused = await platform.http("POST", "/v1/agents/runs", { token: member, body: { input: 42 } });
    expect(refused.status).toBe(400);
    expect(await creations()).toHaveLength(2);
    // A denied creation is recorded as a deny (the suspended member above).
    const { rows } = await pool.query("SELECT permit, code FROM policy_decisions WHERE user_id = 'sam' AND action = 'agent.run.create'");
    expect(rows).toEqual([{ permit: false, code: "60500" }]);
  });

  it("the decision log has one record per tool call with the deciding policy, written before the tool ran; only admins read it", async () => {
    const member = await platform.token({ tenant: "acme", user: "mia" });
    // test_witness reads the decision log on tool-exec's own connection when it runs: it sees a decision only
    // if the policy service had committed it by then.
    const run = await runToEnd(platform, member, "witness the decision");
    expect(run.state).toBe("succeeded");
    const log = await platform.http("GET", `/v1/audit/decisions?run_id=${run.id}`, { token: admin });
    expect(log.status).toBe(200);
    expect(log.body.items).toHaveLength(1);
    expect(log.body.items[0]).toMatchObject({
      action: "knowledge.document.read",
      permit: true,
      policy_ids: ["member-knowledge-read"],
      policy_version: 2,
      step_no: 1,
    });
    const events = await eventsOf(platform, member, run.id);
    const result = events.find((e) => e.type === "tool_result");
    const decided = events.find((e) => e.type === "tool.decided");
    expect(decided?.data.fingerprint).toBe(log.body.items[0].fingerprint);
    expect(result?.data).toMatchObject({ tool_name: "test_witness", result_code: "ok" });
    // What the tool saw when it ran: this call's decision, already durable.
    expect(result?.data.result).toEqual({ decisions_seen: [{ fingerprint: decided?.data.fingerprint, permit: true }] });
    expect((await platform.http("GET", `/v1/audit/decisions?run_id=${run.id}`, { token: member })).status).toBe(403);
  });

  it("an elevation session revoked mid-run denies the very next tool call with 60501", async () => {
    const eve = await platform.token({ tenant: "acme", user: "eve" });
    const session = await platform.http("POST", "/v1/admin/elevations", {
      token: admin,
      body: { user_id: "eve", actions: ["knowledge.document.write"], ttl_seconds: 600 },
    });
    expect(session.status).toBe(201);
    const created = await platform.http("POST", "/v1/agents/runs", {
      token: eve,
      headers: { "elevation-session": session.body.id },
      body: { input: "elevated work" },
    });
    expect(created.status).toBe(201);
    await reachedSecondCall.elevation.opened; // the first guarded call ran under the elevation
    const revoked = await platform.http("POST", `/v1/admin/elevations/${session.body.id}/revoke`, { token: admin });
    expect(revoked.body.revoked_at).not.toBeNull();
    gates.elevation.open();
    const run = await waitFor(async () => {
      const r = await platform.http("GET", `/v1/agents/runs/${created.body.id}`, { token: eve });
      return ["succeeded", "failed"].includes(r.body.state) ? r.body : undefined;
    });
    expect(run.state).toBe("failed");
    expect(run.error).toMatchObject({ code: 60501, tool_name: "test_guarded", step_no: 2 });
    const events = await eventsOf(platform, eve, run.id);
    expect(events.filter((e) => e.type === "tool.decided").map((e) => [e.data.permit, e.data.code])).toEqual([
      [true, ""],
      [false, "60501"],
    ]);
  });

  // Last: it stops the policy service.
  it("with the policy service stopped, tool calls are denied with 60502 and no tool executes", async () => {
    const member = await platform.token({ tenant: "acme", user: "mia" });
    const created = await platform.http("POST", "/v1/agents/runs", { token: member, body: { input: "pdp-down please" } });
    expect(created.status).toBe(201);
    await reachedSecondCall.policyDown.opened;
    await platform.services.policy.stop();
    gates.policyDown.open();
    const run = await waitFor(async () => {
      const { rows } = await pool.query("SELECT state FROM runs WHERE id = $1", [created.body.id]);
      return ["succeeded", "failed"].includes(rows[0].state) ? rows[0] : undefined;
    });
    expect(run.state).toBe("succeeded");
    const { rows: results } = await pool.query("SELECT data FROM events WHERE stream_id = $1 AND type = 'tool_result'", [created.body.id]);
    expect(results.map((r) => r.data.result_code)).toEqual(["60502"]);
    const { rows: effects } = await pool.query("SELECT count(*)::int AS n FROM test_side_effects WHERE run_id = $1", [created.body.id]);
    expect(effects[0].n).toBe(0);
    // Routes are decided in the gateway's process with the same records: the policy service being away does not
    // stop a tenant whose set the gateway can read, and the decision is still in the log.
    const asked = await pool.query("SELECT coalesce(max(id), 0) AS id FROM policy_decisions");
    const route = await platform.http("GET", "/v1/agents/runs", { token: member });
    expect(route.status).toBe(200);
    const { rows: recorded } = await pool.query(
      "SELECT tenant_id, user_id, action, permit, policy_version FROM policy_decisions WHERE id > $1 AND action = 'agent.run.read'",
      [asked.rows[0].id],
    );
    expect(recorded).toEqual([{ tenant_id: "acme", user_id: "mia", action: "agent.run.read", permit: true, policy_version: expect.any(Number) }]);
    // A tenant without a set yet needs the policy service (it installs the default set): no permit (fail closed),
    // but 503 with Retry-After, not a 403 about rights.
    const newcomer = await platform.token({ tenant: "newco-pdp-down", user: "ned" });
    const refused = await platform.http("GET", "/v1/agents/runs", { token: newcomer });
    expect([refused.status, refused.body.code, refused.headers.get("retry-after")]).toEqual([503, 10503, "1"]);
  });
});

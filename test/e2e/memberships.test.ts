import pg from "pg";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { startFakeOpenAi, type ChatRequest, type FakeOpenAi, type Reply } from "../support/fake-openai";
import { waitFor } from "../support/wait-for";

jest.setTimeout(180_000);

/** A latch a scripted model answer can wait on, so the test can act between two tool calls of one run. */
function latch() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/**
 * Roles are facts at decision time (docs/policy.md). Administrators grant and revoke roles through the API;
 * the PDP reads the membership at every decision, so a revocation stops a running run at its next tool call,
 * and a token still claiming the role does not bring it back.
 */
describe("memberships: administered per tenant, read by the PDP at every decision", () => {
  let platform: TestPlatform;
  let model: FakeOpenAi;
  let pool: pg.Pool;
  let admin: string;
  let globexAdmin: string;
  const reachedSecondCall = latch();
  const mayCallAgain = latch();

  function script(req: ChatRequest): Reply | Promise<Reply> {
    const input = String(req.messages.find((m) => m.role === "user")?.content);
    const turn = req.messages.filter((m) => m.role === "tool").length;
    const call = (key: string): Reply => ({ toolCalls: [{ id: `c${turn}`, name: "test_counter", arguments: JSON.stringify({ key }) }] });
    if (input.startsWith("two calls")) {
      if (turn === 0) return call("before");
      if (turn === 1) {
        reachedSecondCall.open();
        return mayCallAgain.opened.then(() => call("after"));
      }
      return { text: "done" };
    }
    return { text: "ok" };
  }

  beforeAll(async () => {
    model = await startFakeOpenAi(script);
    platform = await startTestPlatform({ LLM_BASE_URL: model.baseUrl, LLM_API_KEY: "sk-test", LLM_MODEL: "fake" });
    pool = new pg.Pool({ connectionString: platform.databaseUrl });
    admin = await platform.token({ tenant: "acme", user: "root", roles: ["admin"] });
    globexAdmin = await platform.token({ tenant: "globex", user: "boss", roles: ["admin"] });
  });

  afterAll(async () => {
    mayCallAgain.open();
    await pool?.end();
    await platform?.teardown();
    await model?.close();
  });

  const rolesOf = async (tenantId: string, userId: string) =>
    (await pool.query("SELECT roles FROM memberships WHERE tenant_id = $1 AND user_id = $2", [tenantId, userId])).rows[0]?.roles;

  it("a role revoked mid-run denies the run's next tool call, recorded in the decision log; the token does not bring it back", async () => {
    const dana = await platform.token({ tenant: "acme", user: "dana" });
    const created = await platform.http("POST", "/v1/agents/runs", { token: dana, body: { input: "two calls, please" } });
    expect(created.status).toBe(201);
    expect(await rolesOf("acme", "dana")).toEqual(["member"]); // seeded from her first token

    await reachedSecondCall.opened; // the first call ran with her role
    const revoked = await platform.http("DELETE", "/v1/admin/members/dana/roles/member", { token: admin, body: { reason: "moved to another team" } });
    expect([revoked.status, revoked.body.roles]).toEqual([200, []]);
    mayCallAgain.open();

    const run = await waitFor(
      async () => {
        const { rows } = await pool.query("SELECT state FROM runs WHERE id = $1", [created.body.id]);
        return ["succeeded", "failed"].includes(rows[0].state) ? rows[0] : undefined;
      },
      { timeoutMs: 30_000, what: "the run to end" },
    );
    expect(run.state).toBe("succeeded"); // test_counter is not AbortOnDeny: the model is told of the denial
    const log = await platform.http("GET", `/v1/audit/decisions?run_id=${created.body.id}`, { token: admin });
    expect(
      log.body.items.map((d: { step_no: number; user_id: string; permit: boolean; code: string | null }) => [d.step_no, d.user_id, d.permit, d.code]),
    ).toEqual([
      [1, "dana", true, null],
      [2, "dana", false, "60500"],
    ]);
    const { rows: results } = await pool.query("SELECT data FROM events WHERE stream_id = $1 AND type = 'tool_result' ORDER BY version", [created.body.id]);
    expect(results.map((r) => r.data.result_code)).toEqual(["ok", "60500"]);
    const { rows: effects } = await pool.query("SELECT key, count FROM test_side_effects WHERE run_id = $1", [created.body.id]);
    expect(effects).toEqual([{ key: "before", count: 1 }]);

    // Her token still says member, and a new one says admin: neither is believed.
    for (const token of [dana, await platform.token({ tenant: "acme", user: "dana", roles: ["admin"] })]) {
      expect((await platform.http("GET", `/v1/agents/runs/${created.body.id}`, { token })).body).toMatchObject({ status: 403, code: 10031 });
      expect((await platform.http("POST", "/v1/agents/runs", { token, body: { input: "hi" } })).status).toBe(403);
      expect((await platform.http("GET", "/v1/admin/members", { token })).status).toBe(403);
    }
    expect(await rolesOf("acme", "dana")).toEqual([]);

    const history = await platform.http("GET", "/v1/admin/membership-changes?user_id=dana", { token: admin });
    expect(
      history.body.items.map((c: { change: string; role: string | null; roles: string[]; changed_by: string; reason: string | null }) => [
        c.change,
        c.role,
        c.roles,
        c.changed_by,
        c.reason,
      ]),
    ).toEqual([
      ["seeded", null, ["member"], "dana", null],
      ["revoked", "member", [], "root", "moved to another team"],
    ]);
  });

  it("a granted role counts from the user's very next request", async () => {
    const erin = await platform.token({ tenant: "acme", user: "erin" });
    expect((await platform.http("GET", "/v1/admin/members", { token: erin })).status).toBe(403);
    expect((await platform.http("PUT", "/v1/admin/members/erin/roles/admin", { token: admin })).status).toBe(201);
    const listed = await platform.http("GET", "/v1/admin/members?role=admin", { token: erin });
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((m: { user_id: string }) => m.user_id)).toEqual(["erin", "root"]);
    expect((await platform.http("DELETE", "/v1/admin/members/erin/roles/admin", { token: admin })).status).toBe(200);
    expect((await platform.http("GET", "/v1/admin/members", { token: erin })).status).toBe(403);
  });

  it("a member cannot grant roles, not even to themselves, nor read the members: 403/10031 and nothing changes", async () => {
    const mia = await platform.token({ tenant: "acme", user: "mia" });
    expect((await platform.http("GET", "/v1/agents/runs", { token: mia })).status).toBe(200); // she is a member
    const { rows: before } = await pool.query("SELECT count(*)::int AS n FROM membership_changes");
    for (const [method, path] of [
      ["PUT", "/v1/admin/members/mia/roles/admin"],
      ["PUT", "/v1/admin/members/dana/roles/member"],
      ["DELETE", "/v1/admin/members/root/roles/admin"],
      ["GET", "/v1/admin/members"],
      ["GET", "/v1/admin/membership-changes"],
    ]) {
      const res = await platform.http(method, path, { token: mia });
      expect([method, path, res.status, res.body.code]).toEqual([method, path, 403, 10031]);
    }
    expect(await rolesOf("acme", "mia")).toEqual(["member"]);
    expect(await rolesOf("acme", "dana")).toEqual([]);
    expect(await rolesOf("acme", "root")).toEqual(["admin"]);
    const { rows: after } = await pool.query("SELECT count(*)::int AS n FROM membership_changes");
    expect(after[0].n).toBe(before[0].n);
  });

  it("an administrator of tenant A cannot read or change tenant B's members", async () => {
    const bob = await platform.token({ tenant: "globex", user: "bob" });
    expect((await platform.http("GET", "/v1/agents/runs", { token: bob })).status).toBe(200); // globex's bob, a member
    expect(await rolesOf("globex", "bob")).toEqual(["member"]);

    // acme's admin names "bob": that is acme's bob, whom acme has never seen.
    expect((await platform.http("GET", "/v1/admin/members/bob", { token: admin })).body).toMatchObject({ status: 404, code: 10050 });
    expect((await platform.http("DELETE", "/v1/admin/members/bob/roles/member", { token: admin })).body).toMatchObject({ status: 404, code: 10050 });
    expect((await platform.http("PUT", "/v1/admin/members/bob/roles/admin", { token: admin })).status).toBe(201);
    expect(await rolesOf("acme", "bob")).toEqual(["admin"]);
    expect(await rolesOf("globex", "bob")).toEqual(["member"]);
    expect((await platform.http("GET", "/v1/admin/members", { token: bob })).status).toBe(403); // still no admin in globex

    const acmeMembers = (await platform.http("GET", "/v1/admin/members?page_size=100", { token: admin })).body.items.map((m: { user_id: string }) => m.user_id);
    expect(acmeMembers).not.toContain("boss");
    const globexMembers = await platform.http("GET", "/v1/admin/members?page_size=100", { token: globexAdmin });
    expect(globexMembers.body.items).toEqual([
      expect.objectContaining({ user_id: "bob", roles: ["member"] }),
      expect.objectContaining({ user_id: "boss", roles: ["admin"] }),
    ]);
    const globexHistory = await platform.http("GET", "/v1/admin/membership-changes", { token: globexAdmin });
    expect(globexHistory.body.items.map((c: { change: string; user_id: string }) => [c.change, c.user_id])).toEqual([
      ["seeded", "bob"],
      ["seeded", "boss"],
    ]);
    // A request body cannot name another tenant either: the body is closed.
    const smuggled = await platform.http("PUT", "/v1/admin/members/bob/roles/member", { token: admin, body: { tenant_id: "globex" } });
    expect([smuggled.status, smuggled.body.code]).toEqual([400, 10001]);
  });

  it("addresses a user id of 256 characters through the gateway, and refuses 257 as content", async () => {
    const long = "u".repeat(255) + "é";
    expect((await platform.http("PUT", `/v1/admin/members/${encodeURIComponent(long)}/roles/member`, { token: admin })).status).toBe(201);
    expect((await platform.http("GET", `/v1/admin/members/${encodeURIComponent(long)}`, { token: admin })).body.user_id).toBe(long);
    const tooLong = await platform.http("PUT", `/v1/admin/members/${"u".repeat(257)}/roles/member`, { token: admin });
    expect([tooLong.status, tooLong.body.code]).toEqual([422, 10430]);
  });
});

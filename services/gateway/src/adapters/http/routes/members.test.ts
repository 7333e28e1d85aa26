import type { Pool } from "@steward/platform";
import type { PolicyPoint } from "@steward/contract";
import { registerMemberRoutes } from "./members";
import { startAdminRoutes, type AdminRouteHarness } from "./admin-routes.test-support";

/**
 * The membership routes over a real socket and real PostgreSQL. Tokens are stand-ins ("Bearer <tenant>.<user>"),
 * and the stand-in PDP permits `membership.admin` to the users listed as admins: the real PDP is the e2e suite's.
 */
describe("membership administration routes", () => {
  let harness: AdminRouteHarness;
  let pool: Pool;
  let asked: PolicyPoint[];
  let call: AdminRouteHarness["call"];

  beforeAll(async () => {
    harness = await startAdminRoutes("steward_gw_members", new Set(["acme.root", "globex.boss"]), registerMemberRoutes);
    ({ pool, asked, call } = harness);
    await pool.query(
      "INSERT INTO memberships (tenant_id, user_id, roles) VALUES ('acme', 'alice', '{member}'), ('acme', 'root', '{admin}'), ('globex', 'alice', '{member}')",
    );
  });

  afterAll(async () => {
    await harness?.close();
  });

  const rolesOf = async (tenantId: string, userId: string) =>
    (await pool.query("SELECT roles FROM memberships WHERE tenant_id = $1 AND user_id = $2", [tenantId, userId])).rows[0]?.roles;
  const changeCount = async () => (await pool.query("SELECT count(*)::int AS n FROM membership_changes")).rows[0].n;

  it("answers 401 without a token and 403/10031 to a caller the PDP denies, changing nothing", async () => {
    expect((await call("GET", "/v1/admin/members", null)).body).toMatchObject({ status: 401, code: 10011 });
    const before = await changeCount();
    const denied = await call("PUT", "/v1/admin/members/alice/roles/admin", "acme.alice");
    expect([denied.status, denied.body.code]).toEqual([403, 10031]);
    expect((await call("DELETE", "/v1/admin/members/root/roles/admin", "acme.alice")).status).toBe(403);
    expect(await rolesOf("acme", "alice")).toEqual(["member"]);
    expect(await rolesOf("acme", "root")).toEqual(["admin"]);
    expect(await changeCount()).toBe(before);
    expect(new Set(asked)).toEqual(new Set(["membership.admin"]));
  });

  it("grants a role: 201 with the membership, then 200 and no second record when granted again", async () => {
    const first = await call("PUT", "/v1/admin/members/alice/roles/auditor", "acme.root", JSON.stringify({ reason: "audit season" }));
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      user_id: "alice",
      roles: ["auditor", "member"],
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
    });
    const again = await call("PUT", "/v1/admin/members/alice/roles/auditor", "acme.root");
    expect([again.status, again.body]).toEqual([200, first.body]);
    const changes = await call("GET", "/v1/admin/membership-changes?user_id=alice", "acme.root");
    expect(changes.body.items).toEqual([
      {
        id: expect.any(Number),
        user_id: "alice",
        change: "granted",
        role: "auditor",
        roles: ["auditor", "member"],
        changed_by: "root",
        reason: "audit season",
        changed_at: first.body.updated_at,
      },
    ]);
    expect(changes.body.next_after).toBe(changes.body.items[0].id);
  });

  it("revokes a role with 200 and the roles left; a role not held, or a user not known, is 404/10050", async () => {
    const revoked = await call("DELETE", "/v1/admin/members/alice/roles/auditor", "acme.root", JSON.stringify({ reason: "season over" }));
    expect([revoked.status, revoked.body.roles]).toEqual([200, ["member"]]);
    for (const path of ["/v1/admin/members/alice/roles/auditor", "/v1/admin/members/nobody/roles/member"]) {
      const missing = await call("DELETE", path, "acme.root");
      expect([missing.status, missing.body.code]).toEqual([404, 10050]);
    }
    const last = (await call("GET", "/v1/admin/membership-changes?user_id=alice", "acme.root")).body.items.at(-1);
    expect(last).toMatchObject({ change: "revoked", role: "auditor", roles: ["member"], changed_by: "root", reason: "season over" });
  });

  it("an administrator of one tenant never reads or changes another tenant's members", async () => {
    expect(await call("PUT", "/v1/admin/members/alice/roles/admin", "globex.boss")).toMatchObject({ status: 201, body: { roles: ["admin", "member"] } });
    expect(await rolesOf("acme", "alice")).toEqual(["member"]);
    const revoke = await call("DELETE", "/v1/admin/members/root/roles/admin", "globex.boss");
    expect([revoke.status, revoke.body.code]).toEqual([404, 10050]);
    expect(await rolesOf("acme", "root")).toEqual(["admin"]);
    expect((await call("GET", "/v1/admin/members/root", "globex.boss")).status).toBe(404);
    const listed = await call("GET", "/v1/admin/members", "globex.boss");
    expect(listed.body).toMatchObject({ items: [{ user_id: "alice", roles: ["admin", "member"] }], total: 1 });
    const history = await call("GET", "/v1/admin/membership-changes", "globex.boss");
    expect(history.body.items.map((c: { user_id: string; changed_by: string }) => [c.user_id, c.changed_by])).toEqual([["alice", "boss"]]);
    await call("DELETE", "/v1/admin/members/alice/roles/admin", "globex.boss");
  });

  it("lists members a page at a time and by role; reads one member; pre-provisions a user not seen yet", async () => {
    const odd = "auth0|42@example.com";
    expect((await call("PUT", `/v1/admin/members/${encodeURIComponent(odd)}/roles/member`, "acme.root")).status).toBe(201);
    const page = await call("GET", "/v1/admin/members?page=2&page_size=1", "acme.root");
    expect(page.body).toMatchObject({ items: [{ user_id: odd }], page: 2, page_size: 1, total: 3 });
    const admins = await call("GET", "/v1/admin/members?role=admin", "acme.root");
    expect(admins.body).toMatchObject({ items: [{ user_id: "root", roles: ["admin"] }], total: 1 });
    expect((await call("GET", `/v1/admin/members/${encodeURIComponent(odd)}`, "acme.root")).body).toMatchObject({ user_id: odd, roles: ["member"] });
  });

  it.each([
    ["an unknown body key", "PUT", "/v1/admin/members/alice/roles/x", '{"reason":"r","roles":["admin"]}'],
    ["a body that is not an object", "PUT", "/v1/admin/members/alice/roles/x", "null"],
    ["a reason that is too long", "DELETE", "/v1/admin/members/alice/roles/member", JSON.stringify({ reason: "r".repeat(501) })],
    ["an empty reason", "PUT", "/v1/admin/members/alice/roles/x", '{"reason":""}'],
    ["an unknown query key", "GET", "/v1/admin/members?tenant=globex", undefined],
    ["a repeated query key", "GET", "/v1/admin/members?page=1&page=2", undefined],
    ["a page size over 100", "GET", "/v1/admin/members?page_size=101", undefined],
    ["a control character in a filter", "GET", "/v1/admin/membership-changes?user_id=a%00b", undefined],
    ["a limit of 0", "GET", "/v1/admin/membership-changes?limit=0", undefined],
  ])("answers 400/10001 to %s, changing nothing", async (_label, method, path, body) => {
    const before = [await changeCount(), await rolesOf("acme", "alice")];
    const res = await call(method, path, "acme.root", body);
    expect([res.status, res.body.code]).toEqual([400, 10001]);
    expect([await changeCount(), await rolesOf("acme", "alice")]).toEqual(before);
  });

  it.each([
    ["a role with a space", "/v1/admin/members/alice/roles/team%20lead"],
    ["a role over 64 characters", `/v1/admin/members/alice/roles/${"r".repeat(65)}`],
    ["a role starting with a dot", "/v1/admin/members/alice/roles/.admin"],
    ["a user id with a NUL", "/v1/admin/members/al%00ice/roles/member"],
    ["a user id of white space", "/v1/admin/members/%20%20/roles/member"],
  ])("answers 422/10430 to a grant of %s, changing nothing", async (_label, path) => {
    const before = await changeCount();
    const res = await call("PUT", path, "acme.root");
    expect([res.status, res.body.code]).toEqual([422, 10430]);
    expect(await changeCount()).toBe(before);
  });

  it("answers 404 to a read or revoke naming a user that cannot exist, without asking PostgreSQL to store it", async () => {
    expect((await call("GET", "/v1/admin/members/al%00ice", "acme.root")).body).toMatchObject({ status: 404, code: 10050 });
    expect((await call("DELETE", "/v1/admin/members/al%00ice/roles/member", "acme.root")).body).toMatchObject({ status: 404, code: 10050 });
  });
});

import { createPool, type Pool } from "@steward/platform";
import { grantRole } from "./grant-role";
import { revokeRole } from "./revoke-role";
import { findMember, listMembers } from "./list-members";
import { listMembershipChanges } from "./membership-changes";
import { freshDatabase } from "../../../../test/support/databases";

describe("memberships: administrators grant and revoke roles, every change recorded (real PostgreSQL)", () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: Pool;
  const root = { userId: "root" };

  beforeAll(async () => {
    db = await freshDatabase("steward_members");
    pool = createPool(db.url, { max: 4 });
  });

  afterAll(async () => {
    await pool?.end();
    if (db) await db.drop();
  });

  /** A user as the PDP leaves them after their first token (the seeding itself is the policy service's). */
  const seen = (tenantId: string, userId: string, roles: string[]) =>
    pool.query("INSERT INTO memberships (tenant_id, user_id, roles) VALUES ($1, $2, $3)", [tenantId, userId, roles]);
  const rolesOf = async (tenantId: string, userId: string) => (await findMember(pool, tenantId, userId))?.roles;
  const changesOf = async (tenantId: string, userId: string) =>
    (await listMembershipChanges(pool, tenantId, { userId, limit: 100 })).map((c) => [c.change, c.role, c.roles, c.changed_by, c.reason]);

  it("grants a role (roles sorted, no duplicates) and records who, when, what and why", async () => {
    await seen("acme", "alice", ["member"]);
    const granted = await grantRole(pool, "acme", "alice", "auditor", { userId: "root", reason: "quarterly review" });
    expect(granted).toMatchObject({ changed: true, membership: { user_id: "alice", roles: ["auditor", "member"] } });
    const [change] = await listMembershipChanges(pool, "acme", { userId: "alice", limit: 100 });
    expect(change).toMatchObject({ change: "granted", role: "auditor", roles: ["auditor", "member"], changed_by: "root", reason: "quarterly review" });
    expect(change.changed_at).toBe(granted.membership.updated_at);
  });

  it("granting a role the user holds changes nothing and records nothing", async () => {
    const before = await findMember(pool, "acme", "alice");
    const again = await grantRole(pool, "acme", "alice", "auditor", root);
    expect(again).toEqual({ changed: false, membership: before });
    expect(await changesOf("acme", "alice")).toHaveLength(1);
  });

  it("grants to a user not seen yet: the membership exists before their first token", async () => {
    expect(await grantRole(pool, "acme", "newbie", "member", root)).toMatchObject({ changed: true, membership: { roles: ["member"] } });
    expect(await changesOf("acme", "newbie")).toEqual([["granted", "member", ["member"], "root", null]]);
  });

  it("concurrent grants of roles to one new user all land, each recorded once", async () => {
    const roles = ["r1", "r2", "r3", "r4", "r5", "r6"];
    await Promise.all(roles.map((r) => grantRole(pool, "acme", "racer", r, root)));
    expect(await rolesOf("acme", "racer")).toEqual(roles);
    expect((await changesOf("acme", "racer")).map((c) => c[1]).sort()).toEqual(roles);
  });

  it("revokes a role; the last one leaves the membership with no roles; revoking what is not held is null and records nothing", async () => {
    await seen("acme", "bob", ["member"]);
    expect(await revokeRole(pool, "acme", "bob", "member", { userId: "root", reason: "left the team" })).toMatchObject({ user_id: "bob", roles: [] });
    expect(await findMember(pool, "acme", "bob")).toMatchObject({ roles: [] });
    expect(await revokeRole(pool, "acme", "bob", "member", root)).toBeNull();
    expect(await revokeRole(pool, "acme", "ghost", "member", root)).toBeNull();
    expect(await changesOf("acme", "bob")).toEqual([["revoked", "member", [], "root", "left the team"]]);
    expect(await changesOf("acme", "ghost")).toEqual([]);
  });

  it("keeps tenants apart: a grant, revoke, list or history in one tenant never reaches another's user of the same name", async () => {
    await seen("globex", "bob", ["member"]);
    await grantRole(pool, "acme", "bob", "admin", root);
    expect(await revokeRole(pool, "acme", "bob", "admin", root)).toMatchObject({ roles: [] });
    expect(await revokeRole(pool, "initech", "bob", "member", root)).toBeNull();
    expect(await rolesOf("globex", "bob")).toEqual(["member"]);
    expect(await listMembers(pool, "globex", { page: 1, pageSize: 100 })).toEqual({
      items: [expect.objectContaining({ user_id: "bob", roles: ["member"] })],
      total: 1,
    });
    expect(await listMembershipChanges(pool, "globex", { limit: 100 })).toEqual([]);
    expect(await findMember(pool, "globex", "alice")).toBeNull();
  });

  it("lists a tenant's members in user order, a page at a time, optionally those holding one role", async () => {
    const all = await listMembers(pool, "acme", { page: 1, pageSize: 100 });
    expect(all.items.map((m) => m.user_id)).toEqual(["alice", "bob", "newbie", "racer"]);
    const page2 = await listMembers(pool, "acme", { page: 2, pageSize: 2 });
    expect([page2.items.map((m) => m.user_id), page2.total]).toEqual([["newbie", "racer"], 4]);
    const auditors = await listMembers(pool, "acme", { page: 1, pageSize: 100, role: "auditor" });
    expect([auditors.items.map((m) => m.user_id), auditors.total]).toEqual([["alice"], 1]);
  });

  it("pages through the history with a cursor", async () => {
    const all = await listMembershipChanges(pool, "acme", { limit: 1000 });
    expect(all.length).toBeGreaterThan(4);
    const first = await listMembershipChanges(pool, "acme", { limit: 2 });
    const rest = await listMembershipChanges(pool, "acme", { afterId: first[1].id, limit: 1000 });
    expect([...first, ...rest]).toEqual(all);
  });
});

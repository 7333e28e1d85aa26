import { grantRole, listMembershipChanges } from "@steward/store";
import { createPgPolicyFacts } from "./facts";
import { recordingPool, useFreshDatabase } from "../../../../../test/support/databases";

/**
 * A decision reads the membership; only a user never seen in the tenant costs a write.
 * Token roles only seed such a user (SPEC §3, §5): a known member's row is never rewritten by a request.
 */
describe("membership facts: read at every decision, written only to seed a user never seen (real PostgreSQL)", () => {
  const db = useFreshDatabase("steward_policy_facts");
  const { pool: counted, statements } = recordingPool(() => db.pool);
  const writes = () => statements.filter((s) => /INSERT|UPDATE|DELETE/.test(s));

  beforeEach(() => void statements.splice(0));

  /** The membership row as stored, with the transaction that last wrote it. */
  const row = async (tenantId: string, userId: string) =>
    (await db.pool.query("SELECT xmin::text AS xmin, roles, updated_at FROM memberships WHERE tenant_id = $1 AND user_id = $2", [tenantId, userId])).rows[0];

  it("seeds a user never seen from the token's roles, once; their later requests read and write nothing", async () => {
    const facts = createPgPolicyFacts(counted);
    expect(await facts.currentRoles("acme", "alice", ["member"])).toEqual(["member"]);
    expect(writes()).toHaveLength(1);
    const seeded = await row("acme", "alice");
    statements.splice(0);
    for (let i = 0; i < 5; i++) expect(await facts.currentRoles("acme", "alice", ["member"])).toEqual(["member"]);
    // Another token (more roles, fewer roles) changes nothing either: token roles only seed.
    expect(await facts.currentRoles("acme", "alice", ["admin", "member"])).toEqual(["member"]);
    expect(await facts.currentRoles("acme", "alice", [])).toEqual(["member"]);
    expect(writes()).toEqual([]);
    expect(statements).toHaveLength(7);
    expect(await row("acme", "alice")).toEqual(seeded);
    expect(await listMembershipChanges(db.pool, "acme", { userId: "alice", limit: 10 })).toHaveLength(1);
  });

  it("reads an administrator's change at the next decision, without rewriting it", async () => {
    const facts = createPgPolicyFacts(counted);
    await facts.currentRoles("acme", "bob", ["member"]);
    await grantRole(db.pool, "acme", "bob", "auditor", { userId: "root" });
    const granted = await row("acme", "bob");
    statements.splice(0);
    expect(await facts.currentRoles("acme", "bob", ["member"])).toEqual(["auditor", "member"]);
    expect(writes()).toEqual([]);
    expect(await row("acme", "bob")).toEqual(granted);
  });

  it("a call without token roles (a tool call) of a user never seen reads no roles and writes nothing", async () => {
    const facts = createPgPolicyFacts(counted);
    expect(await facts.currentRoles("acme", "stranger", null)).toEqual([]);
    expect(writes()).toEqual([]);
    expect(await row("acme", "stranger")).toBeUndefined();
  });

  it("concurrent decisions share one read, and a member asked for by many of them is read once", async () => {
    const facts = createPgPolicyFacts(counted);
    await Promise.all(["carol", "dave"].map((u) => facts.currentRoles("globex", u, ["member"])));
    await grantRole(db.pool, "globex", "dave", "admin", { userId: "root" });
    statements.splice(0);
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => facts.currentRoles("globex", ["carol", "dave", "nobody"][i % 3], i % 3 === 2 ? null : ["member"])),
    );
    expect(statements).toHaveLength(1);
    expect(answers.slice(0, 3)).toEqual([["member"], ["admin", "member"], []]);
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(3);
    // Each caller holds its own copy of the roles.
    answers[0].push("changed by a caller");
    expect(answers[3]).toEqual(["member"]);
  });

  it("a pair PostgreSQL cannot hold fails only its own decision, never the others read with it", async () => {
    const facts = createPgPolicyFacts(counted);
    const [good, bad] = await Promise.allSettled([facts.currentRoles("acme", "alice", null), facts.currentRoles("acme", "nul\u0000", null)]);
    expect(good).toEqual({ status: "fulfilled", value: ["member"] });
    expect(bad).toMatchObject({ status: "rejected", reason: { code: expect.stringMatching(/^22/) } });
  });
});

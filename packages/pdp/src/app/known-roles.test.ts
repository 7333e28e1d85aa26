import { createKnownRoles } from "./known-roles";

/** The membership read each decision is spared: remembered roles, re-read when fresh or forgotten. */
describe("known roles", () => {
  function counting(roles: Record<string, string[]>) {
    const reads: string[] = [];
    return {
      reads,
      facts: {
        async currentRoles(tenantId: string, userId: string) {
          reads.push(`${tenantId}/${userId}`);
          return [...(roles[`${tenantId}/${userId}`] ?? [])];
        },
      },
    };
  }

  it("reads a member once, then answers from memory and says so", async () => {
    const { reads, facts } = counting({ "acme/alice": ["member"] });
    const known = createKnownRoles(facts, 10);
    expect(await known.get("acme", "alice", ["member"])).toEqual({ roles: ["member"], remembered: false });
    expect(await known.get("acme", "alice", null)).toEqual({ roles: ["member"], remembered: true });
    expect(reads).toEqual(["acme/alice"]);
  });

  it("reads again when asked fresh, and remembers what it read", async () => {
    const roles = { "acme/bob": ["member"] };
    const { reads, facts } = counting(roles);
    const known = createKnownRoles(facts, 10);
    await known.get("acme", "bob", null);
    roles["acme/bob"] = ["admin"];
    expect(await known.get("acme", "bob", null, { fresh: true })).toEqual({ roles: ["admin"], remembered: false });
    expect(await known.get("acme", "bob", null)).toEqual({ roles: ["admin"], remembered: true });
    expect(reads).toEqual(["acme/bob", "acme/bob"]);
  });

  it("does not remember a member without roles (possibly no membership at all)", async () => {
    const { reads, facts } = counting({});
    const known = createKnownRoles(facts, 10);
    await known.get("acme", "ghost", null);
    expect(await known.get("acme", "ghost", null)).toEqual({ roles: [], remembered: false });
    expect(reads).toHaveLength(2);
  });

  it("keeps members of different tenants apart, at most `capacity` of them", async () => {
    const { reads, facts } = counting({ "acme/carol": ["member"], "globex/carol": ["admin"], "acme/dave": ["member"] });
    const known = createKnownRoles(facts, 2);
    expect((await known.get("acme", "carol", null)).roles).toEqual(["member"]);
    expect((await known.get("globex", "carol", null)).roles).toEqual(["admin"]);
    await known.get("acme", "dave", null); // the least recently used, acme/carol, is forgotten
    expect((await known.get("globex", "carol", null)).remembered).toBe(true);
    expect((await known.get("acme", "carol", null)).remembered).toBe(false);
    expect(reads).toEqual(["acme/carol", "globex/carol", "acme/dave", "acme/carol"]);
  });

  it("hands out copies: a caller changing its roles changes nothing remembered", async () => {
    const { facts } = counting({ "acme/erin": ["member"] });
    const known = createKnownRoles(facts, 10);
    (await known.get("acme", "erin", null)).roles.push("admin");
    (await known.get("acme", "erin", null)).roles.push("admin");
    expect((await known.get("acme", "erin", null)).roles).toEqual(["member"]);
  });
});

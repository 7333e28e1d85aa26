import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createCedarEngine } from "../adapters/cedar/engine";
import type { PolicySetRow, PolicySetStore } from "../adapters/pg/policy-sets";
import { entitiesFor, resourceUid } from "../domain/entities";
import { defaultPolicyDir } from "./create-pdp";
import { createActiveSets, type ActiveSet } from "./active-sets";

const schema = readFileSync(join(defaultPolicyDir, "schema.cedarschema"), "utf8");
const defaultText = readFileSync(join(defaultPolicyDir, "default.cedar"), "utf8");

/** Each tenant's active version 1: one policy named after the tenant, permitting or forbidding everything. */
function storeOf(sets: Record<string, string>): PolicySetStore & { reads: string[] } {
  const reads: string[] = [];
  const row = (tenantId: string): PolicySetRow | null =>
    sets[tenantId] === undefined
      ? null
      : { tenant_id: tenantId, version: 1, policies: sets[tenantId], policy_ids: [], status: "active", created_by: "test", created_at: "", activated_at: null };
  const unused = () => Promise.reject(new Error("not used here"));
  return {
    reads,
    async active(tenantId) {
      reads.push(tenantId);
      return row(tenantId);
    },
    get: async (tenantId, version) => (version === 1 ? row(tenantId) : null),
    list: unused,
    installDefault: unused,
    addDraft: unused,
    activate: unused,
  };
}

describe("active sets held in a bounded LRU", () => {
  const only = (id: string, effect: "permit" | "forbid") => `@id("${id}")\n${effect} (principal, action, resource);`;
  const store = storeOf({ t1: only("t1-permits", "permit"), t2: only("t2-forbids", "forbid"), t3: only("t3-permits", "permit") });
  const engine = createCedarEngine(schema, { preparedSets: 2 });
  const sets = createActiveSets({ store, engine, defaultSet: engine.validate(defaultText), defaultText }, { maxTenants: 2 });

  const decide = (set: ActiveSet, tenantId: string) =>
    engine.authorize(set, {
      principal: { type: "Steward::User", id: "u1" },
      action: "agent.run.read",
      resource: resourceUid("run", "r1"),
      context: { elevated: false, run_id: "", step_no: 0 },
      entities: entitiesFor({ tenantId, userId: "u1", roles: [], resource: { type: "run", id: "r1" } }),
    });

  it("given room for 2 tenants, deciding for a third evicts the least recently used, which is re-read from the store on its next decision", async () => {
    for (const t of ["t1", "t2", "t3"]) await sets.get(t); // t1 is evicted by t3
    await sets.get("t2"); // still held: no read
    const t1 = await sets.get("t1"); // a miss: read again, and t3 (now the oldest use) is evicted
    await sets.get("t2");
    const t3 = await sets.get("t3");
    expect(store.reads).toEqual(["t1", "t2", "t3", "t1", "t3"]);
    expect(decide(t1, "t1")).toMatchObject({ permit: true, policyIds: ["t1-permits"] });
    expect(decide(await sets.get("t2"), "t2")).toMatchObject({ permit: false, policyIds: ["t2-forbids"] });
    expect(decide(t3, "t3")).toMatchObject({ permit: true, policyIds: ["t3-permits"] });
  });

  it("a set evicted while a decision still holds it decides with its own policies", async () => {
    const t1 = await sets.get("t1");
    await sets.get("t2");
    await sets.get("t3"); // t1 is out of the cache and out of Cedar's slots
    expect(decide(t1, "t1")).toMatchObject({ permit: true, policyIds: ["t1-permits"] });
  });
});

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

describe("active sets read once at a time per tenant", () => {
  const text = `@id("t-permits")\npermit (principal, action, resource);`;
  const row = (version: number): PolicySetRow => ({
    tenant_id: "t",
    version,
    policies: text,
    policy_ids: [],
    status: "active",
    created_by: "test",
    created_at: "",
    activated_at: null,
  });

  /** A store whose reads wait until `answer` is called; each read answers the version active then (`switchTo` moves it). */
  function heldStore() {
    const waiting: Array<() => void> = [];
    let activeVersion = 1;
    const store = storeOf({});
    const held: PolicySetStore & { reads: number; answer(): void; switchTo(version: number): void; waiting: number } = {
      ...store,
      reads: 0,
      get waiting() {
        return waiting.length;
      },
      active(tenantId) {
        held.reads++;
        return new Promise<PolicySetRow | null>((resolve, reject) =>
          waiting.push(() => (tenantId === "broken" ? reject(new Error("store away")) : resolve(row(activeVersion)))),
        );
      },
      answer() {
        for (const go of waiting.splice(0)) go();
      },
      switchTo(version: number) {
        activeVersion = version;
      },
    };
    return held;
  }

  /** Active sets over a held store, with an engine that counts its validations. */
  function heldSets() {
    const store = heldStore();
    const engine = createCedarEngine(schema);
    let validations = 0;
    const counted = { ...engine, validate: (policies: string) => (validations++, engine.validate(policies)) };
    const sets = createActiveSets({ store, engine: counted, defaultSet: engine.validate(defaultText), defaultText });
    return { store, sets, validations: () => validations };
  }

  it("given a cold cache, when 20 decisions ask for the tenant's set at once, then the store is read once and the set validated once", async () => {
    const { store, sets, validations } = heldSets();
    const asked = Array.from({ length: 20 }, () => sets.get("t"));
    store.answer();
    const got = await Promise.all(asked);
    expect(store.reads).toBe(1);
    expect(validations()).toBe(1);
    expect(new Set(got).size).toBe(1);
    await sets.get("t"); // now held: no read
    expect(store.reads).toBe(1);
  });

  it("given a read in flight, when an activation arrives before it answers, then its set is not kept and the next decision reads the new version", async () => {
    const { store, sets } = heldSets();
    const before = sets.get("t");
    sets.invalidate("t"); // the activation of version 2 commits and its message arrives while the read is away
    store.answer(); // the read answers what it saw before: version 1
    expect((await before).version).toBe(1);
    store.switchTo(2);
    const after = sets.get("t");
    expect(store.waiting).toBe(1); // read again, not answered from the overtaken read
    store.answer();
    expect((await after).version).toBe(2);
    expect(store.reads).toBe(2);
  });

  it("given a decision asking after the activation, when an older read is still in flight, then it does not join that read", async () => {
    const { store, sets } = heldSets();
    const before = sets.get("t");
    sets.invalidate("t");
    store.switchTo(2);
    const after = sets.get("t");
    expect(store.reads).toBe(2);
    store.answer();
    expect((await after).version).toBe(2);
    await before;
  });

  it("given a read that fails, then every decision waiting on it fails and the next one reads again", async () => {
    const { store, sets } = heldSets();
    const asked = [sets.get("broken"), sets.get("broken")];
    store.answer();
    for (const a of asked) await expect(a).rejects.toThrow("store away");
    expect(store.reads).toBe(1);
    const again = sets.get("broken");
    expect(store.reads).toBe(2);
    store.answer();
    await expect(again).rejects.toThrow("store away");
  });
});

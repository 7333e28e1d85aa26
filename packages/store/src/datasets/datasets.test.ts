import { randomUUID } from "node:crypto";
import { createPool, type Pool } from "@steward/platform";
import { grantDataset } from "./grant-dataset";
import { revokeDataset } from "./revoke-dataset";
import { listDatasetGrants, listDatasetGrantChanges } from "./list-grants";
import { datasetsFor, focusDataset, focusedDataset } from "./dataset-access";
import { parseDatasetTenants } from "./dataset-tenants";
import { freshDatabase } from "../../../../test/support/databases";

describe("the dataset registry: a tenant grants named datasets, runs focus one (real PostgreSQL)", () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: Pool;
  const root = { userId: "root" };
  // The operator's list: which tenant may have which dataset.
  const listed = parseDatasetTenants(JSON.stringify({ demo: ["acme"], sales: ["acme"], ledger: ["globex"] }));

  beforeAll(async () => {
    db = await freshDatabase("steward_datasets_registry");
    pool = createPool(db.url, { max: 4 });
    await pool.query(
      `INSERT INTO memberships (tenant_id, user_id, roles) VALUES
         ('acme', 'mo', '{member}'), ('acme', 'ann', '{analyst,member}'), ('globex', 'gil', '{member}')`,
    );
  });

  afterAll(async () => {
    await pool?.end();
    if (db) await db.drop();
  });

  it("grants a dataset to every member of one tenant only, and records who and why", async () => {
    const granted = await grantDataset(pool, "acme", "demo", [], { userId: "root", reason: "onboarding" });
    expect(granted).toMatchObject({ changed: true, grant: { dataset: "demo", roles: [], granted_by: "root", reason: "onboarding" } });
    await grantDataset(pool, "globex", "ledger", [], root);
    expect(await datasetsFor(pool, listed, "acme", "mo")).toEqual(["demo"]);
    expect(await datasetsFor(pool, listed, "globex", "gil")).toEqual(["ledger"]);
    // A user of the same name in another tenant, and a tenant with no grants, get nothing of acme's.
    expect(await datasetsFor(pool, listed, "globex", "mo")).toEqual(["ledger"]);
    expect(await datasetsFor(pool, listed, "initech", "mo")).toEqual([]);
    expect((await listDatasetGrantChanges(pool, "acme", { limit: 10 })).map((c) => [c.dataset, c.change, c.roles, c.changed_by, c.reason])).toEqual([
      ["demo", "granted", [], "root", "onboarding"],
    ]);
  });

  it("granting the same roles again changes nothing; other roles replace them and are recorded", async () => {
    expect(await grantDataset(pool, "acme", "demo", [], root)).toMatchObject({ changed: false, grant: { reason: "onboarding" } });
    expect(await grantDataset(pool, "acme", "sales", ["analyst", "analyst"], root)).toMatchObject({ changed: true, grant: { roles: ["analyst"] } });
    expect(await grantDataset(pool, "acme", "sales", ["analyst"], root)).toMatchObject({ changed: false });
    expect(await grantDataset(pool, "acme", "sales", ["auditor", "analyst"], root)).toMatchObject({ changed: true, grant: { roles: ["analyst", "auditor"] } });
    expect((await listDatasetGrants(pool, "acme")).map((g) => [g.dataset, g.roles])).toEqual([
      ["demo", []],
      ["sales", ["analyst", "auditor"]],
    ]);
    expect((await listDatasetGrantChanges(pool, "acme", { dataset: "sales", limit: 10 })).map((c) => c.roles)).toEqual([["analyst"], ["analyst", "auditor"]]);
  });

  it("a grant limited to roles admits only members holding one of them, read at the moment of asking", async () => {
    expect(await datasetsFor(pool, listed, "acme", "ann")).toEqual(["demo", "sales"]);
    expect(await datasetsFor(pool, listed, "acme", "mo")).toEqual(["demo"]);
    // A user with no membership at all gets only the grants open to every member.
    expect(await datasetsFor(pool, listed, "acme", "stranger")).toEqual(["demo"]);
    await pool.query("UPDATE memberships SET roles = '{member}' WHERE tenant_id = 'acme' AND user_id = 'ann'");
    expect(await datasetsFor(pool, listed, "acme", "ann")).toEqual(["demo"]);
    await pool.query("UPDATE memberships SET roles = '{analyst,member}' WHERE tenant_id = 'acme' AND user_id = 'ann'");
  });

  it("keeps a run's focus: the latest focus wins, another tenant sees none, and a revoked grant shows as not allowed", async () => {
    const run = randomUUID();
    expect(await focusedDataset(pool, listed, run, "acme", "ann")).toBeNull();
    await focusDataset(pool, { runId: run, tenantId: "acme", dataset: "demo", stepNo: 1 });
    await focusDataset(pool, { runId: run, tenantId: "acme", dataset: "sales", stepNo: 2 });
    expect(await focusedDataset(pool, listed, run, "acme", "ann")).toEqual({ dataset: "sales", allowed: true });
    // The same run id named with another tenant: no focus, and no write into acme's.
    expect(await focusedDataset(pool, listed, run, "globex", "ann")).toBeNull();
    await focusDataset(pool, { runId: run, tenantId: "globex", dataset: "ledger", stepNo: 3 });
    expect(await focusedDataset(pool, listed, run, "acme", "ann")).toEqual({ dataset: "sales", allowed: true });
    // The focus outlives a change of the grant, which the next call sees.
    expect(await focusedDataset(pool, listed, run, "acme", "mo")).toEqual({ dataset: "sales", allowed: false });
    await focusDataset(pool, { runId: run, tenantId: "acme", dataset: "demo", stepNo: 4 });
    expect(await focusedDataset(pool, listed, run, "acme", "ann")).toEqual({ dataset: "demo", allowed: true });
    expect(await revokeDataset(pool, "acme", "demo", { userId: "root", reason: "contract ended" })).toMatchObject({ dataset: "demo", roles: [] });
    expect(await focusedDataset(pool, listed, run, "acme", "ann")).toEqual({ dataset: "demo", allowed: false });
    expect(await datasetsFor(pool, listed, "acme", "mo")).toEqual([]);
  });

  it("revoking what the tenant does not hold is null and records nothing; another tenant's grant is untouched", async () => {
    const before = (await listDatasetGrantChanges(pool, "acme", { limit: 100 })).length;
    expect(await revokeDataset(pool, "acme", "demo", root)).toBeNull();
    expect(await revokeDataset(pool, "acme", "ledger", root)).toBeNull();
    expect(await listDatasetGrantChanges(pool, "acme", { limit: 100 })).toHaveLength(before);
    expect(await datasetsFor(pool, listed, "globex", "gil")).toEqual(["ledger"]);
    const all = await listDatasetGrantChanges(pool, "acme", { limit: 100 });
    expect(all.at(-1)).toMatchObject({ dataset: "demo", change: "revoked", roles: [], changed_by: "root", reason: "contract ended" });
    const rest = await listDatasetGrantChanges(pool, "acme", { afterId: all[1].id, limit: 100 });
    expect([...all.slice(0, 2), ...rest]).toEqual(all);
  });

  it("a grant of a dataset the operator does not list for the tenant admits nobody, and a focus on it is not allowed", async () => {
    const run = randomUUID();
    await grantDataset(pool, "globex", "sales", [], root);
    expect(await datasetsFor(pool, listed, "globex", "gil")).toEqual(["ledger"]);
    await focusDataset(pool, { runId: run, tenantId: "globex", dataset: "sales", stepNo: 1 });
    expect(await focusedDataset(pool, listed, run, "globex", "gil")).toEqual({ dataset: "sales", allowed: false });
    // Listed for globex later (or for every tenant), the same grant admits.
    const wider = parseDatasetTenants(JSON.stringify({ sales: "*", ledger: ["globex"] }));
    expect(await datasetsFor(pool, wider, "globex", "gil")).toEqual(["ledger", "sales"]);
    expect(await focusedDataset(pool, wider, run, "globex", "gil")).toEqual({ dataset: "sales", allowed: true });
    await revokeDataset(pool, "globex", "sales", root);
  });

  it("refuses a name that is not a dataset name", async () => {
    await expect(grantDataset(pool, "acme", "Demo; drop", [], root)).rejects.toMatchObject({ code: "23514" });
  });
});

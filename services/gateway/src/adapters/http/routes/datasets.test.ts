import type { Pool } from "@steward/platform";
import type { PolicyPoint } from "@steward/contract";
import { parseDatasetTenants } from "@steward/store";
import { registerDatasetRoutes } from "./datasets";
import { startAdminRoutes, type AdminRouteHarness } from "./admin-routes.test-support";

/**
 * The dataset grant routes over a real socket and real PostgreSQL. Tokens are stand-ins ("Bearer <tenant>.<user>"),
 * and the stand-in PDP permits `dataset.admin` to the users listed as admins: the real PDP is the e2e suite's.
 */
describe("dataset grant administration routes", () => {
  let harness: AdminRouteHarness;
  let pool: Pool;
  let asked: PolicyPoint[];
  let call: AdminRouteHarness["call"];

  beforeAll(async () => {
    // The operator's list: acme may have demo and sales, globex only ledger.
    const datasetTenants = parseDatasetTenants(JSON.stringify({ demo: ["acme"], sales: ["acme"], ledger: ["globex"] }));
    harness = await startAdminRoutes("steward_gw_datasets", new Set(["acme.root", "globex.boss"]), (app, deps) =>
      registerDatasetRoutes(app, { ...deps, datasetTenants }),
    );
    ({ pool, asked, call } = harness);
  });

  afterAll(async () => {
    await harness?.close();
  });

  const grants = async () => (await pool.query("SELECT tenant_id, dataset, roles FROM tenant_datasets ORDER BY tenant_id, dataset")).rows;
  const changeCount = async () => (await pool.query("SELECT count(*)::int AS n FROM tenant_dataset_changes")).rows[0].n;

  it("answers 401 without a token and 403/10031 to a caller the PDP denies, changing nothing", async () => {
    expect((await call("GET", "/v1/admin/datasets", null)).body).toMatchObject({ status: 401, code: 10011 });
    const denied = await call("PUT", "/v1/admin/datasets/demo", "acme.alice");
    expect([denied.status, denied.body.code]).toEqual([403, 10031]);
    expect((await call("DELETE", "/v1/admin/datasets/demo", "acme.alice")).status).toBe(403);
    expect(await grants()).toEqual([]);
    expect(await changeCount()).toBe(0);
    expect(new Set(asked)).toEqual(new Set(["dataset.admin"]));
  });

  it("grants a dataset to every member: 201 with the grant, then 200 and no second record when granted again", async () => {
    const first = await call("PUT", "/v1/admin/datasets/demo", "acme.root", JSON.stringify({ reason: "onboarding" }));
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      dataset: "demo",
      roles: [],
      granted_by: "root",
      reason: "onboarding",
      granted_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect((await call("PUT", "/v1/admin/datasets/demo", "acme.root")).status).toBe(200);
    expect(await changeCount()).toBe(1);
  });

  it("limits a grant to roles, and changes them", async () => {
    expect((await call("PUT", "/v1/admin/datasets/sales", "acme.root", JSON.stringify({ roles: ["analyst"] }))).body).toMatchObject({ roles: ["analyst"] });
    const changed = await call("PUT", "/v1/admin/datasets/sales", "acme.root", JSON.stringify({ roles: ["finance", "analyst"] }));
    expect([changed.status, changed.body.roles]).toEqual([201, ["analyst", "finance"]]);
    expect((await call("GET", "/v1/admin/datasets", "acme.root")).body.items.map((g: { dataset: string; roles: string[] }) => [g.dataset, g.roles])).toEqual([
      ["demo", []],
      ["sales", ["analyst", "finance"]],
    ]);
  });

  it("bad input: 400/10001 for a malformed body, 422/10430 for a name or role that does not fit, nothing changed", async () => {
    const before = [await grants(), await changeCount()];
    const cases: Array<[string, string | undefined, number, number]> = [
      ["/v1/admin/datasets/demo", JSON.stringify({ roles: "analyst" }), 400, 10001],
      ["/v1/admin/datasets/demo", JSON.stringify({ roles: ["analyst"], tenant_id: "globex" }), 400, 10001],
      ["/v1/admin/datasets/demo", "[]", 400, 10001],
      ["/v1/admin/datasets/demo", JSON.stringify({ roles: Array.from({ length: 33 }, (_, i) => `r${i}`) }), 400, 10001],
      ["/v1/admin/datasets/Demo", undefined, 422, 10430],
      ["/v1/admin/datasets/a%3Bdrop", undefined, 422, 10430],
      ["/v1/admin/datasets/demo", JSON.stringify({ roles: ["no spaces"] }), 422, 10430],
      // A lone surrogate is refused by the body parser already.
      ["/v1/admin/datasets/demo", JSON.stringify({ roles: ["\ud800"] }), 400, 10001],
    ];
    for (const [path, body, status, code] of cases) {
      const r = await call("PUT", path, "acme.root", body);
      expect([path, body, r.status, r.body.code]).toEqual([path, body, status, code]);
    }
    expect([await grants(), await changeCount()]).toEqual(before);
  });

  it("404 for a dataset the operator does not list for the tenant, answered exactly as one that does not exist; nothing recorded", async () => {
    const before = [await grants(), await changeCount()];
    const listedForAnother = await call("PUT", "/v1/admin/datasets/demo", "globex.boss");
    const unknown = await call("PUT", "/v1/admin/datasets/nosuch", "globex.boss");
    expect([listedForAnother.status, listedForAnother.body.code]).toEqual([404, 10050]);
    expect(listedForAnother.body).toEqual(unknown.body);
    // With roles and a reason, the same.
    expect((await call("PUT", "/v1/admin/datasets/ledger", "acme.root", JSON.stringify({ roles: ["analyst"], reason: "x" }))).body).toEqual(unknown.body);
    expect([await grants(), await changeCount()]).toEqual(before);
  });

  it("keeps tenants apart: another tenant's administrator neither sees nor revokes acme's grants", async () => {
    expect((await call("GET", "/v1/admin/datasets", "globex.boss")).body).toEqual({ items: [] });
    expect((await call("DELETE", "/v1/admin/datasets/demo", "globex.boss")).body).toMatchObject({ status: 404, code: 10050 });
    expect((await call("GET", "/v1/admin/dataset-changes", "globex.boss")).body).toEqual({ items: [], next_after: 0 });
    expect((await grants()).filter((g: { tenant_id: string }) => g.tenant_id === "acme")).toHaveLength(2);
  });

  it("revokes a grant with the reason recorded; revoking it again is 404", async () => {
    const revoked = await call("DELETE", "/v1/admin/datasets/sales", "acme.root", JSON.stringify({ reason: "project ended" }));
    expect([revoked.status, revoked.body.dataset, revoked.body.roles]).toEqual([200, "sales", ["analyst", "finance"]]);
    expect((await call("DELETE", "/v1/admin/datasets/sales", "acme.root")).status).toBe(404);
    expect((await call("DELETE", "/v1/admin/datasets/NOT-A-NAME", "acme.root")).status).toBe(404);
    const changes = await call("GET", "/v1/admin/dataset-changes?dataset=sales", "acme.root");
    expect(changes.body.items.map((c: { change: string; roles: string[]; reason: string | null }) => [c.change, c.roles, c.reason])).toEqual([
      ["granted", ["analyst"], null],
      ["granted", ["analyst", "finance"], null],
      ["revoked", ["analyst", "finance"], "project ended"],
    ]);
    const page = await call("GET", "/v1/admin/dataset-changes?limit=1", "acme.root");
    const rest = await call("GET", `/v1/admin/dataset-changes?after=${page.body.next_after}`, "acme.root");
    expect([...page.body.items, ...rest.body.items]).toHaveLength(4);
    expect((await call("GET", "/v1/admin/dataset-changes?after=x", "acme.root")).body.code).toBe(10001);
  });
});

import { randomUUID } from "node:crypto";
import { useFreshDatabase } from "../../../../test/support/databases";
import type { AdminReadEntry } from "./admin-read";
import { listAdminReads } from "./list-admin-reads";
import { recordAdminRead } from "./record-admin-read";

describe("the admin-read audit log (PostgreSQL: recorded before the answer, listed newest first)", () => {
  const db = useFreshDatabase("steward_store_admin_reads");
  const [r1, r2, r3] = [randomUUID(), randomUUID(), randomUUID()];
  const trace = "0af7651916cd43dd8448eb211c80319c";
  const entry = (e: Partial<AdminReadEntry>): AdminReadEntry => ({
    tenantId: "acme",
    userId: "root",
    route: "GET /v1/admin/runs",
    runId: null,
    query: { page: 1, page_size: 20 },
    runIds: [],
    traceId: trace,
    ...e,
  });

  it("records a read and answers it as auditors see it", async () => {
    const recorded = await recordAdminRead(db.pool, entry({ query: { state: "failed", page: 1, page_size: 20 }, runIds: [r1, r2] }));
    expect(recorded).toEqual({
      id: expect.any(Number),
      read_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
      user_id: "root",
      route: "GET /v1/admin/runs",
      run_id: null,
      query: { state: "failed", page: 1, page_size: 20 },
      run_ids: [r1, r2],
      trace_id: trace,
    });
  });

  it("refuses a record that names no run for one run's route, or a route that is not the admins' (nothing written)", async () => {
    const before = await listAdminReads(db.pool, "acme", {}, { page: 1, pageSize: 100 });
    await expect(recordAdminRead(db.pool, entry({ route: "GET /v1/admin/runs/:id", runId: null }))).rejects.toMatchObject({ code: "23514" });
    await expect(recordAdminRead(db.pool, entry({ route: "GET /v1/agents/runs" as never }))).rejects.toMatchObject({ code: "23514" });
    expect((await listAdminReads(db.pool, "acme", {}, { page: 1, pageSize: 100 })).total).toBe(before.total);
  });

  it("lists a tenant's reads newest first, filtered by reader or by a run shown, paged", async () => {
    await recordAdminRead(db.pool, entry({ route: "GET /v1/admin/runs/:id", runId: r1, query: {}, runIds: [r1] }));
    await recordAdminRead(db.pool, entry({ userId: "kim", route: "GET /v1/admin/runs/:id/events", runId: r3, query: { after: 0, limit: 100 }, runIds: [r3] }));
    await recordAdminRead(db.pool, entry({ tenantId: "globex", userId: "eve", runIds: [r1] }));

    const all = await listAdminReads(db.pool, "acme", {}, { page: 1, pageSize: 100 });
    expect(all.items.map((r) => [r.user_id, r.route])).toEqual([
      ["kim", "GET /v1/admin/runs/:id/events"],
      ["root", "GET /v1/admin/runs/:id"],
      ["root", "GET /v1/admin/runs"],
    ]);
    expect(all.total).toBe(3);
    expect(all.items[0]).toMatchObject({ run_id: r3, query: { after: 0, limit: 100 }, run_ids: [r3] });

    // "Who saw r1?": the list that showed it and the read of it, in this tenant only.
    const ofR1 = await listAdminReads(db.pool, "acme", { runId: r1 }, { page: 1, pageSize: 100 });
    expect(ofR1.items.map((r) => r.route)).toEqual(["GET /v1/admin/runs/:id", "GET /v1/admin/runs"]);
    expect((await listAdminReads(db.pool, "acme", { user: "kim" }, { page: 1, pageSize: 100 })).items.map((r) => r.run_id)).toEqual([r3]);
    expect(await listAdminReads(db.pool, "acme", { user: "root", runId: r3 }, { page: 1, pageSize: 100 })).toEqual({ items: [], total: 0 });

    const second = await listAdminReads(db.pool, "acme", {}, { page: 2, pageSize: 2 });
    expect(second).toEqual({ items: [all.items[2]], total: 3 });
  });
});

import { randomUUID } from "node:crypto";
import { useFreshDatabase } from "../../../../test/support/databases";
import { findTenantRun, listTenantRuns, type AdminRunFilter } from "./admin-runs";

interface Row {
  tenant?: string;
  user: string;
  state?: string;
  code?: number;
  at: string;
  thread?: string;
}

describe("the admins' run queries (PostgreSQL: every user's runs of one tenant, filtered, newest first)", () => {
  const db = useFreshDatabase("steward_store_admin_runs");
  const thread = randomUUID();
  const ids: Record<string, string> = {};

  /** Projection rows as the fold leaves them; only the columns the queries read vary. */
  async function insert(name: string, r: Row) {
    const id = randomUUID();
    ids[name] = id;
    await db.pool.query(
      `INSERT INTO runs (id, tenant_id, created_by, thread_id, state, mode, input, response_language, created_at, deadline_at, error, usage, version)
       VALUES ($1, $2, $3, $4, $5, 'agent', $6, NULL, $7, $7::timestamptz + interval '180 seconds', $8, '{"input_tokens":0,"output_tokens":0,"model_calls":0,"tool_calls":0}', 1)`,
      [id, r.tenant ?? "acme", r.user, r.thread ?? null, r.state ?? "succeeded", name, r.at, r.code ? JSON.stringify({ code: r.code, message: "x" }) : null],
    );
  }

  beforeAll(async () => {
    await insert("ana1", { user: "ana", at: "2026-01-01T10:00:00.000000Z", thread });
    await insert("ana2", { user: "ana", at: "2026-01-01T11:00:00.000000Z", state: "failed", code: 60200, thread });
    await insert("bob1", { user: "bob", at: "2026-01-01T12:00:00.000000Z", state: "cancelled", code: 60405 });
    await insert("bob2", { user: "bob", at: "2026-01-01T12:00:00.000001Z", state: "queued" });
    await insert("eve1", { tenant: "globex", user: "eve", at: "2026-01-01T12:30:00.000000Z" });
  });

  const names = async (filter: AdminRunFilter, page = { page: 1, pageSize: 100 }) => {
    const { items, total } = await listTenantRuns(db.pool, "acme", filter, page);
    return { names: items.map((r) => r.input), total };
  };

  it("lists every user's runs of the tenant, newest first, with their creator and thread; never another tenant's", async () => {
    const { items, total } = await listTenantRuns(db.pool, "acme", {}, { page: 1, pageSize: 100 });
    expect(items.map((r) => r.input)).toEqual(["bob2", "bob1", "ana2", "ana1"]);
    expect(total).toBe(4);
    expect(items[2]).toMatchObject({
      id: ids.ana2,
      state: "failed",
      created_by: "ana",
      thread_id: thread,
      created_at: "2026-01-01T11:00:00.000000Z",
      error: { code: 60200, message: "x" },
    });
    expect(items[0]).toMatchObject({ created_by: "bob", thread_id: null, error: null });
  });

  it.each<[string, AdminRunFilter, string[]]>([
    ["user", { user: "bob" }, ["bob2", "bob1"]],
    ["state", { state: "failed" }, ["ana2"]],
    ["code", { code: 60405 }, ["bob1"]],
    ["thread", { threadId: thread }, ["ana2", "ana1"]],
    ["created at or after (inclusive)", { createdAfter: "2026-01-01T11:00:00.000000Z" }, ["bob2", "bob1", "ana2"]],
    ["created before (exclusive)", { createdBefore: "2026-01-01T12:00:00.000001Z" }, ["bob1", "ana2", "ana1"]],
    ["a range and a user together", { user: "ana", createdAfter: "2026-01-01T10:00:00.000001Z", createdBefore: "2026-01-02T00:00:00.000000Z" }, ["ana2"]],
    ["nothing matching", { user: "eve" }, []],
  ])("filters by %s", async (_, filter, expected) => {
    expect(await names(filter)).toEqual({ names: expected, total: expected.length });
  });

  it("pages with the total of the filtered runs", async () => {
    expect(await names({}, { page: 1, pageSize: 3 })).toEqual({ names: ["bob2", "bob1", "ana2"], total: 4 });
    expect(await names({}, { page: 2, pageSize: 3 })).toEqual({ names: ["ana1"], total: 4 });
    expect(await names({}, { page: 3, pageSize: 3 })).toEqual({ names: [], total: 4 });
  });

  it("finds a run of the tenant whoever made it, and not another tenant's", async () => {
    expect(await findTenantRun(db.pool, "acme", ids.bob1)).toMatchObject({ id: ids.bob1, created_by: "bob", state: "cancelled", error: { code: 60405 } });
    expect(await findTenantRun(db.pool, "acme", ids.eve1)).toBeNull();
    expect(await findTenantRun(db.pool, "globex", ids.eve1)).toMatchObject({ created_by: "eve" });
  });
});

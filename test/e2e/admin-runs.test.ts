import { randomBytes } from "node:crypto";
import pg from "pg";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { startFakeOpenAi, type ChatRequest, type FakeOpenAi, type Reply } from "../support/fake-openai";
import { waitFor } from "../support/wait-for";

jest.setTimeout(180_000);

// The administrators' view of other users' runs (docs/admin-runs.md). The model answers at
// once; "fail …" calls a tool that is not registered (the run fails 60200); "ask …" asks the user, so the run
// waits (awaiting_input) until it is cancelled (60405).
function script(req: ChatRequest): Reply {
  const input = String(req.messages.find((m) => m.role === "user")?.content ?? "");
  const asked = req.messages.some((m) => m.role === "tool");
  if (input.startsWith("fail")) return { toolCalls: [{ id: "c0", name: "delete_everything", arguments: "{}" }] };
  if (input.startsWith("ask") && !asked) return { toolCalls: [{ id: "q0", name: "ask_user", arguments: JSON.stringify({ question: "Which region?" }) }] };
  return { text: "answered" };
}

const TERMINAL = ["succeeded", "failed", "cancelled"];
const ADMIN_ROUTES = (runId: string) => ["/v1/admin/runs", `/v1/admin/runs/${runId}`, `/v1/admin/runs/${runId}/events`];

interface AuditRow {
  id: number;
  tenant_id: string;
  user_id: string;
  route: string;
  run_id: string | null;
  query: Record<string, unknown>;
  run_ids: string[];
  trace_id: string;
}

describe("the admins' view of other users' runs: their own policy point, every read audited", () => {
  let platform: TestPlatform;
  let model: FakeOpenAi;
  let pool: pg.Pool;
  let ana: string;
  let bob: string;
  let root: string;
  let foreignAdmin: string;
  /** ana's run in a thread (succeeded), bob's failed run (60200), bob's cancelled run (60405), in that order. */
  let threadId: string;
  let anaRun: any;
  let bobFailed: any;
  let bobCancelled: any;

  const get = (token: string, path: string, headers?: Record<string, string>) => platform.http("GET", path, { token, headers });
  const waitEnd = (token: string, runId: string) =>
    waitFor(
      async () => {
        const run = (await get(token, `/v1/agents/runs/${runId}`)).body;
        return TERMINAL.includes(run.state) ? run : undefined;
      },
      { timeoutMs: 60_000, what: `run ${runId} to end` },
    );
  const audit = async (): Promise<AuditRow[]> =>
    (await pool.query<AuditRow>("SELECT id::int, tenant_id, user_id, route, run_id::text, query, run_ids::text[], trace_id FROM admin_reads ORDER BY id")).rows;
  /** A traceparent of the test's own: the audit record names its trace. */
  const traced = () => {
    const traceId = randomBytes(16).toString("hex");
    return { traceId, headers: { traceparent: `00-${traceId}-${randomBytes(8).toString("hex")}-01` } };
  };
  const ids = (page: { items: Array<{ id: string }> }) => page.items.map((r) => r.id);

  beforeAll(async () => {
    model = await startFakeOpenAi(script);
    platform = await startTestPlatform({ LLM_BASE_URL: model.baseUrl, LLM_API_KEY: "sk-test", LLM_MODEL: "fake" });
    pool = new pg.Pool({ connectionString: platform.databaseUrl, max: 2 });
    ana = await platform.token({ tenant: "acme", user: "ana" });
    bob = await platform.token({ tenant: "acme", user: "bob" });
    root = await platform.token({ tenant: "acme", user: "root", roles: ["admin"] });
    foreignAdmin = await platform.token({ tenant: "globex", user: "gus", roles: ["admin"] });

    threadId = (await platform.http("POST", "/v1/threads", { token: ana, body: { title: "audited" } })).body.id;
    const first = await platform.http("POST", "/v1/agents/runs", { token: ana, body: { input: "first question", thread_id: threadId } });
    anaRun = await waitEnd(ana, first.body.id);
    const failing = await platform.http("POST", "/v1/agents/runs", { token: bob, body: { input: "fail now" } });
    bobFailed = await waitEnd(bob, failing.body.id);
    const asking = await platform.http("POST", "/v1/agents/runs", { token: bob, body: { input: "ask me" } });
    await waitFor(async () => ((await get(bob, `/v1/agents/runs/${asking.body.id}`)).body.state === "awaiting_input" ? true : undefined), {
      timeoutMs: 60_000,
      what: "bob's question",
    });
    expect((await platform.http("POST", `/v1/agents/runs/${asking.body.id}/cancel`, { token: bob })).status).toBe(200);
    bobCancelled = await waitEnd(bob, asking.body.id);
    expect([anaRun.state, bobFailed.state, bobFailed.error?.code, bobCancelled.state, bobCancelled.error?.code]).toEqual([
      "succeeded",
      "failed",
      60200,
      "cancelled",
      60405,
    ]);
  });
  afterAll(async () => {
    await pool?.end();
    await platform?.teardown();
    await model?.close();
  });

  it("lists every user's runs of the tenant, newest first, with whose run it is and its thread; the list is recorded", async () => {
    const { traceId, headers } = traced();
    const before = await audit();
    const list = await get(root, "/v1/admin/runs", headers);
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ page: 1, page_size: 20, total: 3 });
    expect(ids(list.body)).toEqual([bobCancelled.id, bobFailed.id, anaRun.id]);
    // The run snapshot as its creator sees it (SPEC §2, unchanged), plus its creator and thread.
    expect(list.body.items[2]).toEqual({ ...anaRun, created_by: "ana", thread_id: threadId });
    expect(list.body.items[1]).toEqual({ ...bobFailed, created_by: "bob", thread_id: null });

    const added = (await audit()).slice(before.length);
    expect(added).toEqual([
      {
        id: expect.any(Number),
        tenant_id: "acme",
        user_id: "root",
        route: "GET /v1/admin/runs",
        run_id: null,
        query: { page: 1, page_size: 20 },
        run_ids: [bobCancelled.id, bobFailed.id, anaRun.id],
        trace_id: traceId,
      },
    ]);
  });

  it("filters by user, state, code, creation time and thread, and pages; each list leaves its record with the filters", async () => {
    const filtered = async (query: string) => {
      const answer = await get(root, `/v1/admin/runs?${query}`);
      expect(answer.status).toBe(200);
      return answer.body;
    };
    expect(ids(await filtered("user=bob"))).toEqual([bobCancelled.id, bobFailed.id]);
    expect(ids(await filtered("state=failed"))).toEqual([bobFailed.id]);
    expect(ids(await filtered("code=60405"))).toEqual([bobCancelled.id]);
    expect(ids(await filtered("state=cancelled&code=60200"))).toEqual([]);
    expect(ids(await filtered(`thread_id=${threadId}`))).toEqual([anaRun.id]);
    // [created_after, created_before): the bound at ana's run takes it in, the bound at bob's cancelled run leaves it out.
    const range = `created_after=${encodeURIComponent(anaRun.created_at)}&created_before=${encodeURIComponent(bobCancelled.created_at)}`;
    expect(ids(await filtered(range))).toEqual([bobFailed.id, anaRun.id]);
    expect(ids(await filtered("created_before=2000-01-01"))).toEqual([]);
    const paged = await filtered("page=2&page_size=1");
    expect(paged).toMatchObject({ page: 2, page_size: 1, total: 3 });
    expect(ids(paged)).toEqual([bobFailed.id]);
    expect(ids(await filtered("page=4&page_size=1"))).toEqual([]);

    const records = (await audit()).filter((r) => r.user_id === "root" && r.route === "GET /v1/admin/runs").slice(-9);
    expect(records.map((r) => r.query)).toEqual([
      { user: "bob", page: 1, page_size: 20 },
      { state: "failed", page: 1, page_size: 20 },
      { code: 60405, page: 1, page_size: 20 },
      { state: "cancelled", code: 60200, page: 1, page_size: 20 },
      { thread_id: threadId, page: 1, page_size: 20 },
      { created_after: anaRun.created_at, created_before: bobCancelled.created_at, page: 1, page_size: 20 },
      { created_before: "2000-01-01T00:00:00.000000Z", page: 1, page_size: 20 },
      { page: 2, page_size: 1 },
      { page: 4, page_size: 1 },
    ]);
    expect(records.slice(-2).map((r) => r.run_ids)).toEqual([[bobFailed.id], []]);
  });

  it("reads one run and its events as the creator would see them; each read leaves its record", async () => {
    const one = traced();
    const before = await audit();
    const run = await get(root, `/v1/admin/runs/${bobFailed.id}`, one.headers);
    expect(run.status).toBe(200);
    expect(run.body).toEqual({ ...bobFailed, created_by: "bob", thread_id: null });

    const own = (await get(bob, `/v1/agents/runs/${bobFailed.id}/events?after=0&limit=1000`)).body;
    const page = traced();
    const events = await get(root, `/v1/admin/runs/${bobFailed.id}/events?after=0&limit=1000`, page.headers);
    expect(events.status).toBe(200);
    expect(events.body).toEqual(own);
    expect(events.body.items.map((e: { type: string }) => e.type)).toContain("run.failed");
    // Paged like the run's own JSON page: after a sequence number, at most `limit`.
    const middle = await get(root, `/v1/admin/runs/${bobFailed.id}/events?after=1&limit=2`);
    expect(middle.body).toEqual({ items: own.items.slice(1, 3), next_after: 3, has_more: true });

    const added = (await audit()).slice(before.length);
    expect(added.map(({ id: _, ...r }) => r)).toEqual([
      { tenant_id: "acme", user_id: "root", route: "GET /v1/admin/runs/:id", run_id: bobFailed.id, query: {}, run_ids: [bobFailed.id], trace_id: one.traceId },
      {
        tenant_id: "acme",
        user_id: "root",
        route: "GET /v1/admin/runs/:id/events",
        run_id: bobFailed.id,
        query: { after: 0, limit: 1000 },
        run_ids: [bobFailed.id],
        trace_id: page.traceId,
      },
      {
        tenant_id: "acme",
        user_id: "root",
        route: "GET /v1/admin/runs/:id/events",
        run_id: bobFailed.id,
        query: { after: 1, limit: 2 },
        run_ids: [bobFailed.id],
        trace_id: expect.stringMatching(/^[0-9a-f]{32}$/),
      },
    ]);
  });

  it("auditors read the records newest first through GET /v1/audit/admin-reads, by reader and by run shown; reading them is not recorded", async () => {
    const rows = await audit();
    const answer = await get(root, "/v1/audit/admin-reads?page_size=100");
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ page: 1, page_size: 100, total: rows.length });
    const newest = rows[rows.length - 1];
    expect(answer.body.items[0]).toEqual({
      id: newest.id,
      read_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
      user_id: newest.user_id,
      route: newest.route,
      run_id: newest.run_id,
      query: newest.query,
      run_ids: newest.run_ids,
      trace_id: newest.trace_id,
    });
    expect(answer.body.items.map((r: { id: number }) => r.id)).toEqual(rows.map((r) => r.id).reverse());

    // Who saw ana's run: every list whose page showed it, newest first.
    const ofAna = await get(root, `/v1/audit/admin-reads?run_id=${anaRun.id}&page_size=100`);
    const expected = rows
      .filter((r) => r.run_ids.includes(anaRun.id))
      .map((r) => r.id)
      .reverse();
    expect(expected.length).toBeGreaterThan(0);
    expect(ofAna.body.items.map((r: { id: number }) => r.id)).toEqual(expected);
    expect((await get(root, "/v1/audit/admin-reads?user=ana")).body).toMatchObject({ items: [], total: 0 });
    const second = await get(root, "/v1/audit/admin-reads?page=2&page_size=1");
    expect(second.body.items.map((r: { id: number }) => r.id)).toEqual([rows[rows.length - 2].id]);
    expect(await audit()).toEqual(rows);
  });

  it("refuses a member 403/10031 on every admin route and the audit log, and records nothing", async () => {
    const before = await audit();
    for (const token of [ana, bob]) {
      for (const path of [...ADMIN_ROUTES(anaRun.id), "/v1/audit/admin-reads"]) {
        expect((await get(token, path)).body).toMatchObject({ status: 403, code: 10031 });
      }
    }
    expect((await get(ana, "/v1/admin/runs?state=bogus")).body).toMatchObject({ status: 403, code: 10031 });
    expect(await audit()).toEqual(before);
  });

  it("leaves the runs' own routes creator-only: an admin's GET /v1/agents/runs/:id of another's run is still 404", async () => {
    for (const path of [`/v1/agents/runs/${anaRun.id}`, `/v1/agents/runs/${anaRun.id}/events`]) {
      expect((await get(root, path)).body).toMatchObject({ status: 404, code: 10050 });
    }
    expect((await get(root, "/v1/agents/runs")).body).toMatchObject({ items: [], total: 0 });
  });

  it("answers 404 for a run of another tenant or none, recording nothing; another tenant's admin lists only theirs", async () => {
    const before = await audit();
    for (const path of ADMIN_ROUTES(anaRun.id).slice(1)) {
      expect((await get(foreignAdmin, path)).body).toMatchObject({ status: 404, code: 10050, detail: "run not found" });
    }
    for (const path of ADMIN_ROUTES("00000000-0000-4000-8000-000000000000").slice(1)) {
      expect((await get(root, path)).body).toMatchObject({ status: 404, code: 10050 });
    }
    expect((await get(root, "/v1/admin/runs/not-a-run")).body).toMatchObject({ status: 404, code: 10050 });
    expect(await audit()).toEqual(before);

    expect((await get(foreignAdmin, "/v1/admin/runs")).body).toMatchObject({ items: [], total: 0 });
    const added = (await audit()).slice(before.length);
    expect(added.map((r) => [r.tenant_id, r.user_id, r.run_ids])).toEqual([["globex", "gus", []]]);
    expect((await get(foreignAdmin, "/v1/audit/admin-reads")).body.items.map((r: { user_id: string }) => r.user_id)).toEqual(["gus"]);
  });

  it.each([
    ["an unknown state", "/v1/admin/runs?state=bogus"],
    ["a code that is not a number", "/v1/admin/runs?code=ASK_MODE_DENIED"],
    ["a time that is not ISO-8601", "/v1/admin/runs?created_after=yesterday"],
    ["a time without a zone", "/v1/admin/runs?created_before=2026-12-01T09:00:00"],
    ["an empty time range", "/v1/admin/runs?created_after=2026-12-02&created_before=2026-12-01"],
    ["a thread id that is not a UUID", "/v1/admin/runs?thread_id=thread-1"],
    ["an empty user", "/v1/admin/runs?user="],
    ["an unknown key", "/v1/admin/runs?sort=created_at"],
    ["a repeated key", "/v1/admin/runs?user=ana&user=bob"],
    ["page 0", "/v1/admin/runs?page=0"],
    ["a page of 101", "/v1/admin/runs?page_size=101"],
    ["a query on one run", `/v1/admin/runs/RUN?verbose=1`],
    ["an events limit of 0", `/v1/admin/runs/RUN/events?limit=0`],
    ["a bad audit page size", "/v1/audit/admin-reads?page_size=1000"],
    ["a bad audit run id", "/v1/audit/admin-reads?run_id=x"],
  ])("refuses %s with 400/10001 and records nothing", async (_, path) => {
    const before = await audit();
    const answer = await get(root, path.replace("RUN", anaRun.id));
    expect(answer.body).toMatchObject({ status: 400, code: 10001 });
    expect(await audit()).toEqual(before);
  });

  it("refuses the read (503, no run in the answer) when its audit record cannot be written", async () => {
    const carol = await platform.token({ tenant: "acme", user: "carol", roles: ["admin"] });
    await pool.query(`
      CREATE FUNCTION refuse_carol() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.user_id = 'carol' THEN RAISE EXCEPTION 'audit log refused'; END IF; RETURN NEW; END $$;
      CREATE TRIGGER refuse_carol BEFORE INSERT ON admin_reads FOR EACH ROW EXECUTE FUNCTION refuse_carol();`);
    try {
      const before = await audit();
      for (const path of ADMIN_ROUTES(anaRun.id)) {
        const answer = await get(carol, path);
        expect(answer.status).toBe(503);
        expect(answer.headers.get("retry-after")).toBe("1");
        expect(answer.body).toEqual({
          type: "https://steward.dev/problems/10503",
          title: "Service Unavailable",
          status: 503,
          code: 10503,
          detail: "the read could not be recorded in the audit log; try again",
        });
      }
      expect(await audit()).toEqual(before);
      // The same reads by an administrator whose records can be written go through.
      expect((await get(root, `/v1/admin/runs/${anaRun.id}`)).status).toBe(200);
    } finally {
      await pool.query("DROP TRIGGER refuse_carol ON admin_reads; DROP FUNCTION refuse_carol();");
    }
  });
});

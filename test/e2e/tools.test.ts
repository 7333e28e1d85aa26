import pg from "pg";
import { createToolExecApi } from "@steward/proto";
import { datasetsUrl } from "../support/databases";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { startFakeOpenAi, type ChatRequest, type FakeOpenAi, type Reply } from "../support/fake-openai";
import { eventsOf, runToEnd } from "../support/runs";
import { waitFor } from "../support/wait-for";

jest.setTimeout(180_000);

const inputOf = (req: ChatRequest) => String(req.messages.find((m) => m.role === "user")?.content);
const call = (id: string, name: string, args: unknown): Reply => ({ toolCalls: [{ id, name, arguments: JSON.stringify(args) }] });

const DATA_STEPS: Array<[string, unknown]> = [
  ["focus_dataset", { dataset: "demo" }],
  ["list_tables", {}],
  ["describe_table", { table: "orders" }],
  ["validate_query", { sql: "select count(*) as n from orders" }],
  ["run_query", { sql: "select country, count(*) as customers from customers group by country order by country" }],
];
const HOSTILE: Array<[string, unknown]> = [
  ["focus_dataset", { dataset: "demo" }],
  ["run_query", { sql: "delete from orders" }],
  ["run_query", { sql: "update orders set quantity = 0" }],
  ["run_query", { sql: "drop table orders" }],
  ["run_query", { sql: "with d as (delete from orders returning *) select * from d" }],
  ["run_query", { sql: "select pg_sleep(10)" }],
  // An escape attempt: a second statement ending the READ ONLY transaction, then a long sleep.
  ["run_query", { sql: "select 1) a; commit; select pg_sleep(12); select * from (select 1" }],
  ["run_query", { sql: "select 1) a; create temp table t as select 1; select * from (select 1" }],
  ["run_query", { sql: "select pg_notify('steward_outbox', 'x')" }],
  ["run_query", { sql: "select relname, n_live_tup from pg_stat_all_tables where relname in ('events', 'runs', 'policy_decisions')" }],
];

describe("real tools: knowledge base, read-only dataset, a write that needs approval", () => {
  let platform: TestPlatform;
  let model: FakeOpenAi;
  let pool: pg.Pool;
  let datasets: pg.Pool;
  let admin: string;
  let member: string;

  function script(req: ChatRequest): Reply {
    const input = inputOf(req);
    const turn = req.messages.filter((m) => m.role === "tool").length;
    const plan = input.startsWith("data") ? DATA_STEPS : input.startsWith("hostile") ? HOSTILE : null;
    if (plan) return turn < plan.length ? call(`d${turn}`, plan[turn][0], plan[turn][1]) : { text: "analysed" };
    if (input.startsWith("note")) return turn === 0 ? call("n0", "save_note", { title: "Meeting", body: "We agreed to ship on Friday." }) : { text: "noted" };
    return { text: "ok" };
  }

  beforeAll(async () => {
    model = await startFakeOpenAi(script);
    platform = await startTestPlatform({
      LLM_BASE_URL: model.baseUrl,
      LLM_API_KEY: "sk-test",
      LLM_MODEL: "fake",
      DATASET_STATEMENT_TIMEOUT_MS: "500",
      DATASET_TENANTS: '{"demo":["acme"]}',
    });
    pool = new pg.Pool({ connectionString: platform.databaseUrl });
    // The platform seeded the datasets database tool-exec reads (the application's name + `_datasets`).
    datasets = new pg.Pool({ connectionString: datasetsUrl(platform.databaseUrl) });
    admin = await platform.token({ tenant: "acme", user: "root", roles: ["admin"] });
    member = await platform.token({ tenant: "acme", user: "mo" });
    // The tenant chooses which datasets its members may focus.
    expect((await platform.http("PUT", "/v1/admin/datasets/demo", { token: admin })).status).toBe(201);
  });

  afterAll(async () => {
    await pool?.end();
    await datasets?.end();
    await platform?.teardown();
    await model?.close();
  });

  it("manages a tenant's knowledge base over REST; other tenants never see or delete its documents", async () => {
    const added = await platform.http("POST", "/v1/knowledge/documents", {
      token: admin,
      body: { title: "Shipping", body: "Parcels ship within two working days.\n\nExpress ships the same day.", format: "markdown" },
    });
    expect(added.status).toBe(201);
    expect((await platform.http("POST", "/v1/knowledge/documents", { token: member, body: { title: "x", body: "y" } })).status).toBe(403);
    const list = await platform.http("GET", "/v1/knowledge/documents", { token: member });
    expect(list.body.items.map((d: { title: string }) => d.title)).toContain("Shipping");
    const stranger = await platform.token({ tenant: "globex", user: "root", roles: ["admin"] });
    expect((await platform.http("GET", "/v1/knowledge/documents", { token: stranger })).body.total).toBe(0);
    expect((await platform.http("DELETE", `/v1/knowledge/documents/${added.body.id}`, { token: stranger })).status).toBe(404);
    expect((await platform.http("DELETE", `/v1/knowledge/documents/${added.body.id}`, { token: admin })).status).toBe(204);
    expect((await platform.http("GET", "/v1/knowledge/documents", { token: member })).body.total).toBe(0);
  });

  it("focus_dataset unlocks the data tools; exploration and a query give real results, recorded in the step ledger", async () => {
    const run = await runToEnd(platform, member, "data questions");
    expect(run.state).toBe("succeeded");
    const events = await eventsOf(platform, member, run.id);
    const results = events.filter((e) => e.type === "tool_result");
    expect(results.map((e) => e.data.result_code)).toEqual(["ok", "ok", "ok", "ok", "ok"]);
    expect(results[0].data.next_state).toBe("focused");
    expect(results.slice(1, 4).every((e) => e.data.exploration === true)).toBe(true);
    expect(results[1].data.result.tables.map((t: { table: string }) => t.table)).toEqual(["customers", "orders", "products"]);
    expect(results[4].data.result.rows).toEqual([
      { country: "AT", customers: "1" },
      { country: "FI", customers: "1" },
      { country: "UK", customers: "2" },
      { country: "US", customers: "2" },
    ]);
    const requests = model.requests.filter((r) => inputOf(r) === "data questions");
    expect(requests[0].tools?.map((t) => t.function.name)).not.toContain("run_query");
    expect(requests[1].tools?.map((t) => t.function.name)).toContain("run_query");
    // The step ledger is tool output: a user message, never the system prompt.
    const last = requests.at(-1)!.messages;
    expect(last[0].role).toBe("system");
    expect(String(last[0].content)).not.toMatch(/step \d/);
    expect(
      last
        .filter((m) => m.role === "user")
        .map((m) => String(m.content))
        .join("\n"),
    ).toMatch(/- step 5 run_query: ok/);
  });

  it("refuses writes, DDL, data-modifying CTEs, second statements, temp tables and notifications; stops a long query; sees no application table", async () => {
    const started = Date.now();
    const run = await runToEnd(platform, member, "hostile queries");
    // Had the escape committed its way out of the READ ONLY transaction, its pg_sleep(12) would have run.
    expect(Date.now() - started).toBeLessThan(12_000);
    const events = await eventsOf(platform, member, run.id);
    const results = events.filter((e) => e.type === "tool_result");
    expect(results.map((e) => e.data.result_code)).toEqual([
      "ok",
      "QUERY_NOT_ALLOWED",
      "QUERY_NOT_ALLOWED",
      "QUERY_NOT_ALLOWED",
      "QUERY_NOT_ALLOWED",
      "QUERY_TIMEOUT",
      "QUERY_NOT_ALLOWED",
      "QUERY_NOT_ALLOWED",
      "QUERY_NOT_ALLOWED",
      "ok",
    ]);
    expect(results[9].data.result.rows).toEqual([]);
    const { rows } = await datasets.query("SELECT count(*)::int AS n, sum(quantity)::int AS q FROM demo_data.orders");
    expect(rows[0]).toEqual({ n: 60, q: 120 });
    expect(await datasets.query("SELECT to_regclass('demo_data.orders') IS NOT NULL AS present")).toMatchObject({ rows: [{ present: true }] });
  });

  it("a write that requires approval runs once on approve, and a retried call returns the stored result", async () => {
    const created = await platform.http("POST", "/v1/agents/runs", { token: member, body: { input: "note this" } });
    await waitFor(async () =>
      (await platform.http("GET", `/v1/agents/runs/${created.body.id}`, { token: member })).body.state === "awaiting_confirmation" ? true : undefined,
    );
    await platform.http("POST", `/v1/agents/runs/${created.body.id}/confirmation`, { token: member, body: { decision: "approve" } });
    const done = await waitFor(async () => {
      const r = await platform.http("GET", `/v1/agents/runs/${created.body.id}`, { token: member });
      return r.body.state === "succeeded" ? r.body : undefined;
    });
    expect(done.output.text).toBe("noted");
    const saved = () => pool.query("SELECT count(*)::int AS n FROM kb_documents WHERE tenant_id = 'acme' AND title = 'Meeting'");
    expect((await saved()).rows[0].n).toBe(1);
    // Called as the runner (tool-exec serves no other identity), for runs of this user and tenant.
    const toolExec = createToolExecApi(platform.toolExecAddr, platform.grpcOptions("agent-runner", "tool-exec"));
    const second = await platform.http("POST", "/v1/agents/runs", { token: member, body: { input: "another run" } });
    try {
      const again = await toolExec.invoke({
        runId: created.body.id,
        tenantId: "acme",
        userId: "mo",
        stepNo: 1,
        callId: "n0",
        toolName: "save_note",
        argumentsJson: JSON.stringify({ title: "Meeting", body: "We agreed to ship on Friday." }),
        elevationSessionId: "",
        mcpSessionId: "",
        mcpMode: "",
      });
      expect(again.replayed).toBe(true);
      const other = await toolExec.invoke({
        runId: second.body.id,
        tenantId: "acme",
        userId: "mo",
        stepNo: 1,
        callId: "x",
        toolName: "save_note",
        argumentsJson: JSON.stringify({ title: "Other", body: "b" }),
        elevationSessionId: "",
        mcpSessionId: "",
        mcpMode: "",
      });
      expect(other.replayed).toBe(false);
    } finally {
      toolExec.close();
    }
    expect((await saved()).rows[0].n).toBe(1);
  });
});

import { randomBytes } from "node:crypto";
import pg from "pg";
import { dropDatabase, ensureDatabase } from "@steward/store";
import { asDatasetReader, databaseUrl, loadLedgerDataset } from "../support/databases";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { startFakeOpenAi, type ChatRequest, type FakeOpenAi, type Reply } from "../support/fake-openai";
import { eventsOf, runToEnd } from "../support/runs";
import { waitFor } from "../support/wait-for";

jest.setTimeout(180_000);

function latch() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

const inputOf = (req: ChatRequest) => String(req.messages.find((m) => m.role === "user")?.content);
const call = (id: string, name: string, args: unknown): Reply => ({ toolCalls: [{ id, name, arguments: JSON.stringify(args) }] });

const PLANS: Record<string, Array<[string, unknown]>> = {
  // acme's member reaches for globex's ledger: by name, by listing, and by naming its schema from acme's dataset.
  cross: [
    ["focus_dataset", { dataset: "ledger" }],
    ["focus_dataset", {}],
    ["focus_dataset", { dataset: "demo" }],
    ["run_query", { sql: "select count(*) as n from ledger_data.accounts" }],
    ["run_query", { sql: "select count(*) as n from customers" }],
  ],
  ledger: [
    ["focus_dataset", { dataset: "ledger" }],
    ["run_query", { sql: "select owner from accounts order by id" }],
  ],
  analyst: [["focus_dataset", { dataset: "demo" }]],
  // globex's member reaches for acme's shop, which the operator lists for acme only.
  borrow: [
    ["focus_dataset", { dataset: "demo" }],
    ["run_query", { sql: "select name from customers" }],
  ],
};

/**
 * Per-tenant datasets through the whole platform: tool-exec serves two datasets (DATASETS), each tenant's
 * administrator grants its own over REST, and the model (a scripted OpenAI-compatible fake) calls the data tools.
 */
describe("per-tenant datasets: a tenant's members focus and query only the datasets the tenant grants", () => {
  let platform: TestPlatform;
  let model: FakeOpenAi;
  let ledgerUrl: string;
  let tokens: Record<string, string>;
  const revoke = { reached: latch(), go: latch() };

  function script(req: ChatRequest): Reply | Promise<Reply> {
    const input = inputOf(req);
    const turn = req.messages.filter((m) => m.role === "tool").length;
    if (input.startsWith("revoke")) {
      if (turn === 0) return call("r0", "focus_dataset", { dataset: "demo" });
      if (turn === 1) {
        revoke.reached.open();
        return revoke.go.opened.then(() => call("r1", "run_query", { sql: "select count(*) as n from orders" }));
      }
      return { text: "done" };
    }
    const plan = PLANS[input.split(" ")[0]];
    if (plan) return turn < plan.length ? call(`d${turn}`, plan[turn][0], plan[turn][1]) : { text: "done" };
    return { text: "ok" };
  }

  beforeAll(async () => {
    ledgerUrl = databaseUrl(`steward_e2e_ledger_${randomBytes(5).toString("hex")}`);
    await ensureDatabase(ledgerUrl);
    model = await startFakeOpenAi(script);
    // The demo dataset's role exists once the platform has loaded the demo dataset; the ledger grants to it after.
    // Each service as its own PostgreSQL role: the grants of migration 018 are all tool-exec and the gateway get.
    // No test hooks (the test tools make a table of their own, which tool-exec's role may not).
    platform = await startTestPlatform(
      {
        STEWARD_TEST_HOOKS: "0",
        LLM_BASE_URL: model.baseUrl,
        LLM_API_KEY: "sk-test",
        LLM_MODEL: "fake",
        DATASETS: JSON.stringify({
          demo: { schema: "demo_data", description: "A small shop" },
          ledger: { url: asDatasetReader(ledgerUrl), schema: "ledger_data" },
        }),
        // The operator's list: acme may have the shop, globex its ledger (docs/datasets.md).
        DATASET_TENANTS: JSON.stringify({ demo: ["acme"], ledger: ["globex"] }),
      },
      { roles: true },
    );
    await loadLedgerDataset(ledgerUrl);
    tokens = {
      acmeAdmin: await platform.token({ tenant: "acme", user: "root", roles: ["admin"] }),
      acme: await platform.token({ tenant: "acme", user: "mo" }),
      globexAdmin: await platform.token({ tenant: "globex", user: "boss", roles: ["admin"] }),
      globex: await platform.token({ tenant: "globex", user: "gil" }),
    };
    expect((await platform.http("PUT", "/v1/admin/datasets/demo", { token: tokens.acmeAdmin })).status).toBe(201);
    expect((await platform.http("PUT", "/v1/admin/datasets/ledger", { token: tokens.globexAdmin, body: { reason: "finance team" } })).status).toBe(201);
  });

  afterAll(async () => {
    revoke.go.open();
    await platform?.teardown();
    await model?.close();
    if (ledgerUrl) await dropDatabase(ledgerUrl).catch(() => undefined);
  });

  const resultsOf = async (token: string, runId: string) => (await eventsOf(platform, token, runId)).filter((e) => e.type === "tool_result").map((e) => e.data);

  it("tenant A's member can neither focus tenant B's dataset nor see it listed nor query it from A's own", async () => {
    const run = await runToEnd(platform, tokens.acme, "cross tenant");
    expect(run.state).toBe("succeeded");
    const results = await resultsOf(tokens.acme, run.id);
    expect(results.map((r) => r.result_code)).toEqual(["DATASET_NOT_ALLOWED", "ok", "ok", "QUERY_INVALID", "ok"]);
    expect(results[0].result).toEqual({
      error_code: "DATASET_NOT_ALLOWED",
      note: 'no dataset "ledger" is available to you in this tenant',
      available: [{ name: "demo", description: "A small shop" }],
    });
    expect(results[0].next_state).toBeUndefined();
    expect(results[1].result.available).toEqual([{ name: "demo", description: "A small shop" }]);
    expect(results[2].next_state).toBe("focused");
    // acme's connection is to acme's dataset's database: globex's schema is not there at all.
    expect(results[3].result.note).toMatch(/relation "ledger_data.accounts" does not exist/);
    expect(results[4].result.rows).toEqual([{ n: "6" }]);
    // No row of the ledger reached acme's run or its model.
    expect(JSON.stringify(model.requests.filter((r) => inputOf(r) === "cross tenant"))).not.toContain("Globex");
  });

  it("tenant B's administrator cannot grant itself A's dataset (404, as for a name that does not exist), and a grant it holds anyway admits nobody", async () => {
    const borrowed = await platform.http("PUT", "/v1/admin/datasets/demo", { token: tokens.globexAdmin, body: { reason: "borrow" } });
    const unknown = await platform.http("PUT", "/v1/admin/datasets/nosuch", { token: tokens.globexAdmin, body: { reason: "borrow" } });
    expect([borrowed.status, borrowed.body.code]).toEqual([404, 10050]);
    expect(borrowed.body).toEqual(unknown.body);
    // A grant globex holds anyway (written before the operator's list existed): still nothing of acme's is read.
    const owner = new pg.Client({ connectionString: platform.databaseUrl });
    await owner.connect();
    await owner.query("INSERT INTO tenant_datasets (tenant_id, dataset, roles, granted_by) VALUES ('globex', 'demo', '{}', 'boss')").finally(() => owner.end());
    const run = await runToEnd(platform, tokens.globex, "borrow the shop");
    const results = await resultsOf(tokens.globex, run.id);
    expect(results.map((r) => r.result_code)).toEqual(["DATASET_NOT_ALLOWED", "TOOL_NOT_AVAILABLE"]);
    expect(results[0].result.available).toEqual([{ name: "ledger" }]);
    expect(JSON.stringify(model.requests.filter((r) => inputOf(r) === "borrow the shop"))).not.toContain("Lovelace");
  });

  it("tenant B's member focuses and queries B's dataset", async () => {
    const run = await runToEnd(platform, tokens.globex, "ledger questions");
    const results = await resultsOf(tokens.globex, run.id);
    expect(results.map((r) => r.result_code)).toEqual(["ok", "ok"]);
    expect(results[1].result.rows).toEqual([{ owner: "Globex treasury" }, { owner: "Globex payroll" }]);
    // globex's grant is globex's: acme's administrator does not see it.
    const listed = await platform.http("GET", "/v1/admin/datasets", { token: tokens.acmeAdmin });
    expect(listed.body.items.map((g: { dataset: string }) => g.dataset)).toEqual(["demo"]);
  });

  it("a grant limited to a role admits a member only while the member holds it (roles read at each call)", async () => {
    expect((await platform.http("PUT", "/v1/admin/datasets/demo", { token: tokens.acmeAdmin, body: { roles: ["analyst"] } })).status).toBe(201);
    const before = await runToEnd(platform, tokens.acme, "analyst before");
    expect((await resultsOf(tokens.acme, before.id)).map((r) => r.result_code)).toEqual(["DATASET_NOT_ALLOWED"]);
    expect((await platform.http("PUT", "/v1/admin/members/mo/roles/analyst", { token: tokens.acmeAdmin })).status).toBe(201);
    const after = await runToEnd(platform, tokens.acme, "analyst after");
    expect((await resultsOf(tokens.acme, after.id)).map((r) => r.result_code)).toEqual(["ok"]);
    expect((await platform.http("PUT", "/v1/admin/datasets/demo", { token: tokens.acmeAdmin, body: { roles: [] } })).status).toBe(201);
  });

  it("revoking the tenant's grant stops a running run's next query", async () => {
    const created = await platform.http("POST", "/v1/agents/runs", { token: tokens.acme, body: { input: "revoke while running" } });
    expect(created.status).toBe(201);
    await revoke.reached.opened;
    const revoked = await platform.http("DELETE", "/v1/admin/datasets/demo", { token: tokens.acmeAdmin, body: { reason: "contract ended" } });
    expect(revoked.status).toBe(200);
    revoke.go.open();
    const done = await waitFor(async () => {
      const r = await platform.http("GET", `/v1/agents/runs/${created.body.id}`, { token: tokens.acme });
      return r.body.state === "succeeded" ? r.body : undefined;
    });
    const results = await resultsOf(tokens.acme, done.id);
    expect(results.map((r) => r.result_code)).toEqual(["ok", "DATASET_NOT_ALLOWED"]);
    const changes = await platform.http("GET", "/v1/admin/dataset-changes?dataset=demo", { token: tokens.acmeAdmin });
    expect(changes.body.items.at(-1)).toMatchObject({ change: "revoked", changed_by: "root", reason: "contract ended" });
  });
});

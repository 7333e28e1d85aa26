import { randomBytes, randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { startFakeOpenAi, type ChatRequest, type FakeOpenAi, type Reply } from "../support/fake-openai";
import { waitFor } from "../support/wait-for";
import { ROUTES } from "../support/fuzz/catalogue";
import { describeRequest } from "../support/fuzz/generate";
import type { FuzzFixture, SeededDocument, SeededRun, TenantMark } from "../support/fuzz/fixture";
import { formatFuzzReport } from "../support/fuzz/report";
import { runFuzz, type FuzzResult } from "../support/fuzz/run-fuzz";
import { CORE_PRINCIPALS, fuzzTokens, type FuzzToken } from "../support/fuzz/tokens";

jest.setTimeout(240_000);

// Generated requests over every route (bodies, queries, headers, paths, methods, tokens of other
// users and tenants): no answer ≥ 500, none later than the bound, every 4xx a problem document with a code,
// and nobody reads or steers a run, document, policy set, grant or membership that is not theirs. FUZZ_SEED
// replays a run; FUZZ_ONLY=i,j sends only those requests of it (docs/operations.md, "The gateway fuzz test").
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : randomInt(2 ** 31);
if (!Number.isSafeInteger(SEED) || SEED < 0) throw new Error(`FUZZ_SEED must be a non-negative integer, not ${process.env.FUZZ_SEED}`);
const ONLY = process.env.FUZZ_ONLY ? process.env.FUZZ_ONLY.split(",").map(Number) : undefined;
const COUNT = Math.max(10_000, Number(process.env.FUZZ_REQUESTS ?? 10_000));
const UNLIMITED = "1000000000";

const keys = { secret: randomBytes(32).toString("base64url"), issuer: "https://id.fuzz.test", audience: "steward-fuzz" };
const marker = () => `fzmark-${randomBytes(8).toString("hex")}`;
const inputOf = (req: ChatRequest) => String(req.messages.find((m) => m.role === "user")?.content);
const call = (id: string, name: string, args: unknown): Reply => ({ toolCalls: [{ id, name, arguments: JSON.stringify(args) }] });

/** The model: `ask …` asks the user, `confirm …` calls a tool that needs approval, anything else answers at once. */
function script(req: ChatRequest): Reply {
  const input = inputOf(req);
  const answered = req.messages.some((m) => m.role === "tool");
  if (input.startsWith("ask ") && !answered) return call("q0", "ask_user", { question: `Which region for ${input.slice(4)}?`, options: ["EU", "US"] });
  if (input.startsWith("confirm ") && !answered) return call("c0", "test_write", { key: input.slice(8) });
  return { text: `done: ${input}` };
}

describe("the gateway under generated requests", () => {
  let platform: TestPlatform;
  let model: FakeOpenAi;
  let pool: pg.Pool;
  let fixture: FuzzFixture;
  let result: FuzzResult;
  const tokenOf = (tokens: FuzzToken[], tenant: string, user: string) => tokens.find((t) => t.label === `${tenant}/${user}`)!.header!.slice("Bearer ".length);

  beforeAll(async () => {
    model = await startFakeOpenAi(script);
    platform = await startTestPlatform({
      STEWARD_JWT_SECRET: keys.secret,
      STEWARD_JWT_ISSUER: keys.issuer,
      STEWARD_JWT_AUDIENCE: keys.audience,
      LLM_BASE_URL: model.baseUrl,
      LLM_API_KEY: "sk-fuzz",
      LLM_MODEL: "fake",
      // Each tenant may have the dataset its fixture grants; the fuzz's other names answer 404.
      DATASET_TENANTS: JSON.stringify({ fuzz_marked: ["acme", "beta"] }),
      // The limits answer 429 long before 10,000 requests from one address; raised so every request reaches its route.
      GATEWAY_RATE_LIMIT_PER_USER: UNLIMITED,
      GATEWAY_RATE_LIMIT_PER_TENANT: UNLIMITED,
      GATEWAY_RATE_LIMIT_RUNS_PER_USER: UNLIMITED,
      GATEWAY_RATE_LIMIT_RUNS_PER_TENANT: UNLIMITED,
      GATEWAY_RATE_LIMIT_PER_ADDRESS: UNLIMITED,
    });
    pool = new pg.Pool({ connectionString: platform.databaseUrl, max: 2 });
    const tokens = await fuzzTokens(keys);
    const as = (tenant: string, user: string) => ({ token: tokenOf(tokens, tenant, user) });

    // Each core principal's first request seeds its membership with its token's roles.
    for (const p of CORE_PRINCIPALS) expect((await platform.http("GET", "/v1/agents/runs", as(p.tenant, p.user))).status).toBe(200);

    // Finished runs, runs waiting for their owner, and waiting runs no control route names (live streams throughout).
    const plan: Array<[string, string, "plain" | "ask" | "confirm", string, boolean]> = [
      ["acme", "alice", "plain", "succeeded", false],
      ["acme", "alice", "ask", "awaiting_input", false],
      ["acme", "alice", "confirm", "awaiting_confirmation", false],
      ["acme", "alice", "ask", "awaiting_input", true],
      ["acme", "amy", "plain", "succeeded", false],
      ["acme", "amy", "ask", "awaiting_input", false],
      ["acme", "amy", "confirm", "awaiting_confirmation", true],
      ["acme", "ada", "plain", "succeeded", false],
      ["beta", "bea", "plain", "succeeded", false],
      ["beta", "bea", "confirm", "awaiting_confirmation", false],
      ["beta", "bea", "ask", "awaiting_input", true],
      ["beta", "ben", "plain", "succeeded", false],
      ["beta", "ben", "ask", "awaiting_input", false],
      ["beta", "bert", "plain", "succeeded", false],
    ];
    const runs: SeededRun[] = [];
    for (const [tenant, user, kind, state, reserved] of plan) {
      const m = marker();
      const input = kind === "plain" ? `tell me about ${m}` : `${kind} ${m}`;
      const created = await platform.http("POST", "/v1/agents/runs", { ...as(tenant, user), body: { input } });
      expect(created.status).toBe(201);
      runs.push({ id: created.body.id, owner: { tenant, user }, marker: m, state, reserved });
    }
    for (const run of runs) {
      await waitFor(
        async () => {
          const seen = await platform.http("GET", `/v1/agents/runs/${run.id}`, as(run.owner.tenant, run.owner.user));
          return seen.body.state === run.state ? true : undefined;
        },
        { timeoutMs: 30_000, what: `seeded run ${run.id} to be ${run.state}` },
      );
    }

    const documents: SeededDocument[] = [];
    const tenantMarks: TenantMark[] = [];
    const defaultPolicies = readFileSync(join(__dirname, "..", "..", "infra", "policies", "default.cedar"), "utf8");
    for (const [tenant, admin] of [
      ["acme", "ada"],
      ["beta", "bert"],
    ]) {
      for (let i = 0; i < 2; i++) {
        const m = marker();
        const body = { title: `Handbook ${m}`, body: `Internal note ${m}.` };
        const doc = await platform.http("POST", "/v1/knowledge/documents", { ...as(tenant, admin), body });
        expect(doc.status).toBe(201);
        documents.push({ id: doc.body.id, tenant, marker: m });
      }
      const m = marker();
      const set = await platform.http("POST", "/v1/admin/policies", { ...as(tenant, admin), body: { policies: `// ${m}\n${defaultPolicies}` } });
      expect(set.status).toBe(201);
      expect(JSON.stringify(set.body)).toContain(m);
      tenantMarks.push({ tenant, what: `policy set ${set.body.version}`, marker: m });
      const reason = marker();
      const grant = await platform.http("PUT", "/v1/admin/datasets/fuzz_marked", { ...as(tenant, admin), body: { roles: ["member"], reason } });
      expect(grant.status).toBe(201);
      tenantMarks.push({ tenant, what: "dataset grant fuzz_marked", marker: reason });
    }
    fixture = { runs, documents, tenantMarks, tokens, defaultPolicies };

    result = await runFuzz(fixture, {
      baseUrl: platform.gatewayUrl,
      seed: SEED,
      count: COUNT,
      only: ONLY,
      concurrency: 16,
      timeoutMs: 10_000,
      streamReadMs: 250,
      streamReadBytes: 64 * 1024,
    });
    console.log(formatFuzzReport(result));
    // What the gateway itself said about an answer ≥ 500 (its error log lines), for triage.
    if (result.failures.some((f) => f.finding.kind === "5xx")) {
      console.log(
        platform.services.gateway.lines
          .filter((l) => /"level":(50|60)/.test(l))
          .slice(0, 20)
          .join("\n"),
      );
    }
  });

  afterAll(async () => {
    await pool?.end();
    await platform?.teardown();
    await model?.close();
  });

  it(`sends at least 10,000 requests over every route the gateway serves (seed ${SEED})`, () => {
    if (!ONLY) expect(result.sent).toBeGreaterThanOrEqual(10_000);
    if (ONLY) return;
    // Each route was reached past authentication (not only 401 and 429), so its own checks ran.
    const unexercised = ROUTES.filter((r) => {
      const t = result.routes.get(r.name);
      return !t || t.sent - t.unauthenticated - t.rateLimited === 0;
    }).map((r) => r.name);
    expect(unexercised).toEqual([]);
  });

  const kinds = ["5xx", "hang", "dropped connection", "not a problem document", "read across principals", "refused token accepted"];
  it.each(kinds)("finds no %s", (kind) => {
    const found = result.failures.filter((f) => f.finding.kind === kind);
    // The first ten in full (request as sent, answer), then a count; the report above lists the rest.
    const shown = found.slice(0, 10).map((f) => `${f.finding.why.slice(0, 400)}\n    ${describeRequest(f.request)}`);
    expect(found.length > 10 ? [...shown, `… ${found.length - 10} more (seed ${SEED})`] : shown).toEqual([]);
  });

  it("changed no run but through its creator: every control event on a seeded run follows a 2xx to its owner", async () => {
    const routeOf: Record<string, string> = {
      "input.received": "POST /v1/agents/runs/:id/input",
      "confirmation.decided": "POST /v1/agents/runs/:id/confirmation",
      "run.cancel_requested": "POST /v1/agents/runs/:id/cancel",
    };
    const { rows } = await pool.query<{ stream_id: string; type: string; n: number }>(
      "SELECT stream_id::text, type, count(*)::int AS n FROM events WHERE stream_id = ANY($1::uuid[]) AND type = ANY($2) GROUP BY 1, 2",
      [fixture.runs.map((r) => r.id), Object.keys(routeOf)],
    );
    const unexplained = rows.filter((row) => row.n > (result.ownerControls.get(row.stream_id)?.get(routeOf[row.type]) ?? 0));
    expect(unexplained).toEqual([]);
  });

  it("deleted no document and changed no membership or dataset grant of another tenant", async () => {
    const { rows: docs } = await pool.query<{ id: string }>("SELECT id::text FROM kb_documents WHERE id = ANY($1::uuid[])", [
      fixture.documents.map((d) => d.id),
    ]);
    const present = new Set(docs.map((d) => d.id));
    const lost = fixture.documents.filter((d) => !present.has(d.id) && !(result.deletedDocuments.get(d.id) ?? []).includes(d.tenant));
    expect(lost).toEqual([]);
    const { rows: changes } = await pool.query<{ tenant_id: string; changed_by: string }>(
      `SELECT tenant_id, changed_by FROM membership_changes WHERE change IN ('granted', 'revoked')
       UNION SELECT tenant_id, changed_by FROM tenant_dataset_changes`,
    );
    // The administrators who seeded the grants, and those the fuzz saw change something in their own tenant.
    const changers = new Set([...result.tenantAdmins, "acme/ada", "beta/bert"]);
    expect(changes.filter((c) => !changers.has(`${c.tenant_id}/${c.changed_by}`))).toEqual([]);
  });
});

import type { FastifyInstance } from "fastify";
import { createLogger, ForbiddenError, UnauthenticatedError } from "@steward/platform";
import type { RunSnapshot } from "@steward/contract";
import { buildApp, type AppDeps } from "./app";
import type { RunReads } from "../../app/read-runs";

const RUN_ID = "0b6f1c6e-8d1f-4a57-9a35-5d0c2f3e9a10";

/** A snapshot with every field SPEC §2 lists, nested parts included, plus fields no schema names. */
const SNAPSHOT = {
  id: RUN_ID,
  state: "succeeded",
  mode: "agent",
  input: "hello",
  response_language: null,
  created_at: "2026-01-01T12:00:00.000000Z",
  started_at: "2026-01-01T12:00:00.100000Z",
  finished_at: "2026-01-01T12:00:01.000000Z",
  deadline_at: "2026-01-01T12:03:00.000000Z",
  output: { text: "hi", evidence: [{ document_id: "d1", title: "Doc", snippet: "s", score: 0.5, page: 3 }], citations: ["d1"] },
  error: null,
  usage: { input_tokens: 1, output_tokens: 2, model_calls: 1, tool_calls: 0, cached_tokens: 7 },
  thread_id: "not in any schema",
} as unknown as RunSnapshot;

const THREAD_ID = "3d1b7c2a-5e8f-4a90-b1c2-7f6e5d4c3b2a";
const THREAD = {
  id: THREAD_ID,
  title: null,
  created_at: SNAPSHOT.created_at,
  updated_at: SNAPSHOT.created_at,
  archived_at: null,
  run_count: 1,
  last_run_id: RUN_ID,
};

interface Asked {
  point: string;
  resource: { type: string; id: string };
}

/** The whole HTTP surface with fakes behind it; tokens are "Bearer ok" (permitted) or "Bearer denied". */
function appWithFakes(asked: Asked[]): FastifyInstance {
  const runs: RunReads = {
    list: async () => ({ items: [SNAPSHOT], total: 1 }),
    get: async () => SNAPSHOT,
    finished: async () => true,
    events: async () =>
      [{ type: "run.queued", data: { input: "hello", extra: 1 }, metadata: { seq: 1, recorded_at: "2026-01-01T12:00:00.000000Z", more: true } }] as never,
  };
  const deps = {
    logger: createLogger("gateway-test", "silent"),
    authenticate: async (authorization?: string) => {
      if (authorization !== "Bearer ok" && authorization !== "Bearer denied") throw new UnauthenticatedError();
      return { tenantId: "acme", userId: authorization === "Bearer ok" ? "alice" : "mallory", roles: [] };
    },
    authorize: async (principal: { userId: string }, point: string, resource: { type: string; id: string }) => {
      asked.push({ point, resource });
      if (principal.userId !== "alice") throw new ForbiddenError();
    },
    runs,
    createRun: async () => SNAPSHOT,
    controls: { answer: async () => SNAPSHOT, confirm: async () => SNAPSHOT, cancel: async () => SNAPSHOT },
    policyAdmin: { getPolicySet: async () => ({}) },
    threads: {
      create: async () => THREAD,
      list: async () => ({ items: [THREAD], total: 1 }),
      get: async () => ({ ...THREAD, runs: [SNAPSHOT] }),
      archive: async () => THREAD,
    },
  } as unknown as AppDeps;
  return buildApp(deps);
}

describe("the routes' declared contract (schemas, policy points, the order of refusals)", () => {
  const asked: Asked[] = [];
  const app = appWithFakes(asked);
  let base = "";
  beforeAll(async () => {
    base = await app.listen({ port: 0, host: "127.0.0.1" });
  });
  afterAll(() => app.close());
  beforeEach(() => (asked.length = 0));

  async function call(method: string, path: string, token: string | null, body?: string) {
    const headers: Record<string, string> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(`${base}${path}`, { method, headers, body });
    const text = await res.text();
    return { status: res.status, type: res.headers.get("content-type") ?? "", body: text ? JSON.parse(text) : null };
  }

  it("asks the PDP for each route's declared point and resource, once per request", async () => {
    expect((await call("GET", `/v1/agents/runs/${RUN_ID}`, "ok")).status).toBe(200);
    expect((await call("POST", "/v1/agents/runs", "ok", '{"input":"hi"}')).status).toBe(201);
    expect((await call("GET", "/v1/admin/policies/3", "ok")).status).toBe(200);
    expect((await call("GET", "/v1/knowledge/documents?page=2", "denied")).status).toBe(403);
    expect(asked).toEqual([
      { point: "agent.run.read", resource: { type: "run", id: RUN_ID } },
      { point: "agent.run.create", resource: { type: "run", id: "" } },
      { point: "policy.admin", resource: { type: "resource", id: "policy.admin" } },
      { point: "knowledge.document.read", resource: { type: "resource", id: "knowledge" } },
    ]);
  });

  it("guards the thread routes with the runs' points over the runs' resource; a path that cannot name a thread is 404 first", async () => {
    expect((await call("POST", "/v1/threads", "ok")).status).toBe(201);
    expect((await call("POST", "/v1/threads", "ok", '{"title":"t"}')).status).toBe(201);
    expect((await call("GET", "/v1/threads?page=2&page_size=5", "ok")).body).toEqual({ items: [THREAD], page: 2, page_size: 5, total: 1 });
    expect((await call("GET", `/v1/threads/${THREAD_ID}`, "ok")).body).toEqual({ ...THREAD, runs: [JSON.parse(JSON.stringify(SNAPSHOT))] });
    expect((await call("DELETE", `/v1/threads/${THREAD_ID}`, "ok")).status).toBe(200);
    const run = { type: "run", id: "" };
    expect(asked).toEqual([
      { point: "agent.run.create", resource: run },
      { point: "agent.run.create", resource: run },
      { point: "agent.run.read", resource: run },
      { point: "agent.run.read", resource: run },
      { point: "agent.run.control", resource: run },
    ]);
    asked.length = 0;
    expect((await call("GET", "/v1/threads/not-a-uuid", null)).body).toMatchObject({ status: 404, code: 10050, detail: "thread not found" });
    expect((await call("DELETE", `/v1/threads/${THREAD_ID.toUpperCase()}`, null)).body).toMatchObject({ status: 404, code: 10050 });
    expect(asked).toEqual([]);
    expect((await call("GET", `/v1/threads/${THREAD_ID}?x=1`, "ok")).body).toMatchObject({ status: 400, code: 10001 });
    expect((await call("POST", "/v1/threads", "ok", '{"title":null}')).body).toMatchObject({ status: 400, code: 10001 });
  });

  it("refuses in the pinned order: the body's bytes, then 401, then 403, then the schema's 400", async () => {
    expect((await call("POST", "/v1/agents/runs", null, '{"input":')).body).toMatchObject({ status: 400, code: 10001 });
    expect((await call("POST", "/v1/agents/runs", null, '{"input":"hi","roles":[]}')).body).toMatchObject({ status: 401, code: 10011 });
    expect((await call("POST", "/v1/agents/runs", "denied", '{"input":"hi","roles":[]}')).body).toMatchObject({ status: 403, code: 10031 });
    expect((await call("GET", "/v1/agents/runs?page=0", null)).status).toBe(401);
    expect(asked).toHaveLength(1);
  });

  it("answers 404 to a run id that is not a UUID before anything else, and 404 to a bad version after the token", async () => {
    expect((await call("GET", "/v1/agents/runs/not-a-uuid", null)).body).toMatchObject({ status: 404, code: 10050, detail: "run not found" });
    expect((await call("POST", "/v1/agents/runs/not-a-uuid/cancel", "ok")).body).toMatchObject({ status: 404, code: 10050 });
    expect(asked).toEqual([]);
    expect((await call("GET", "/v1/admin/policies/0", null)).status).toBe(401);
    expect((await call("GET", "/v1/admin/policies/0", "ok")).body).toMatchObject({ status: 404, code: 10050, detail: "policy set version not found" });
    expect((await call("DELETE", "/v1/knowledge/documents/nope", "ok")).body).toMatchObject({ status: 404, code: 10050, detail: "document not found" });
  });

  it.each([
    ["an extra key", "POST", "/v1/agents/runs", '{"input":"hi","roles":["admin"]}', "the request body is malformed at /roles"],
    ["a wrong value", "POST", "/v1/agents/runs", '{"input":"hi","mode":"other"}', "the request body is malformed at /mode"],
    ["a body that is not an object", "POST", "/v1/agents/runs", '["hi"]', "the request body is malformed"],
    ["no body", "POST", `/v1/agents/runs/${RUN_ID}/input`, undefined, "the request body is malformed"],
    ["an unknown query key", "GET", "/v1/agents/runs?limit=3", undefined, "the query is malformed at /limit"],
    ["a repeated query key", "GET", "/v1/agents/runs?page=1&page=2", undefined, "query key page may appear only once"],
    ["a query on a route that takes none", "GET", "/v1/admin/status?x=1", undefined, "the query is malformed at /x"],
    ["a bad Idempotency-Key", "POST", "/v1/agents/runs", '{"input":"hi"}', "the request headers are malformed at /idempotency-key"],
  ])("answers 400/10001 as a problem naming the place to %s", async (_label, method, path, body, detail) => {
    const headers: Record<string, string> = { authorization: "Bearer ok" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (_label === "a bad Idempotency-Key") headers["idempotency-key"] = "has space";
    const res = await fetch(`${base}${path}`, { method, headers, body });
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    const problem = (await res.json()) as { status: number; code: number; detail: string };
    expect([problem.status, problem.code]).toEqual([400, 10001]);
    expect(problem.detail).toContain(detail);
  });

  it("takes no body, or the closed object, on the routes where the body is optional", async () => {
    const path = "/v1/admin/datasets/sales";
    expect((await call("DELETE", path, "ok", '{"reason":"x","other":1}')).body).toMatchObject({ status: 400, code: 10001 });
    expect((await call("DELETE", path, "ok", "null")).body).toMatchObject({ status: 400, code: 10001 });
  });

  it("sends every field of the run snapshot, including those no schema lists (nothing dropped or coerced)", async () => {
    expect((await call("GET", `/v1/agents/runs/${RUN_ID}`, "ok")).body).toEqual(JSON.parse(JSON.stringify(SNAPSHOT)));
    expect((await call("GET", "/v1/agents/runs", "ok")).body).toEqual({ items: [JSON.parse(JSON.stringify(SNAPSHOT))], page: 1, page_size: 20, total: 1 });
    expect((await call("POST", `/v1/agents/runs/${RUN_ID}/cancel`, "ok")).body).toEqual(JSON.parse(JSON.stringify(SNAPSHOT)));
    const page = await call("GET", `/v1/agents/runs/${RUN_ID}/events`, "ok");
    expect(page.body).toEqual({
      items: [{ seq: 1, type: "run.queued", data: { input: "hello", extra: 1 }, recorded_at: "2026-01-01T12:00:00.000000Z" }],
      next_after: 1,
      has_more: false,
    });
  });

  it("serves the OpenAPI document and the reference page without a token, from its own files", async () => {
    const document = await fetch(`${base}/openapi.json`);
    expect(document.status).toBe(200);
    expect(((await document.json()) as { openapi: string }).openapi).toBe("3.1.0");
    const page = await fetch(`${base}/docs/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("swagger-ui");
    expect(html).not.toMatch(/<script[^>]+src="https?:/);
    const bundle = await fetch(`${base}/docs/static/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    await bundle.arrayBuffer();
    expect(asked).toEqual([]);
  });
});

import { startTestPlatform, type TestPlatform } from "../support/platform";
import { callGateway, checkAgainstOpenApi } from "../support/gateway-http";
import { waitFor } from "../support/wait-for";
import { validateOpenApi } from "../../services/gateway/src/openapi-validity.test-support";

jest.setTimeout(180_000);

// The route schemas are the contract. Every answer below comes through callGateway, which checks it
// against the document the running gateway serves (route, status, media type, body): a mismatch fails the call.
describe("the gateway's OpenAPI document, against the running gateway", () => {
  let platform: TestPlatform;
  let member: string;
  let admin: string;
  const as = (token: string) => (method: string, path: string, body?: unknown) => callGateway(platform.gatewayUrl, token, method, path, body);

  beforeAll(async () => {
    platform = await startTestPlatform({ DATASET_TENANTS: '{"sales":["apico"]}' });
    member = await platform.token({ tenant: "apico", user: "alice", roles: ["member"] });
    admin = await platform.token({ tenant: "apico", user: "root", roles: ["admin"] });
  });
  afterAll(async () => {
    await platform?.teardown();
  });

  it("serves a valid OpenAPI 3.1 document and the reference page, without a token", async () => {
    const res = await fetch(`${platform.gatewayUrl}/openapi.json`);
    expect(res.status).toBe(200);
    const document = (await res.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(await validateOpenApi(document)).toMatchObject({ valid: true, version: "3.1" });
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(["/v1/agents/runs", "/v1/agents/runs/{id}/events"]));
    const page = await fetch(`${platform.gatewayUrl}/docs/`);
    expect([page.status, page.headers.get("content-type")]).toEqual([200, expect.stringMatching(/^text\/html/)]);
    expect(await page.text()).toContain("swagger-ui");
    // The development sign-in is documented, and outside development (here STEWARD_ENV=test) it answers 404.
    expect(Object.keys(document.paths)).toContain("/v1/dev/sign-in");
    const signIn = await fetch(`${platform.gatewayUrl}/v1/dev/sign-in`, { method: "POST" });
    expect([signIn.status, ((await signIn.json()) as { code: number }).code]).toEqual([404, 10050]);
  });

  it("answers the runs routes as documented: create, read, list, events, controls and their refusals", async () => {
    const alice = as(member);
    const created = await alice("POST", "/v1/agents/runs", { input: "Which regions do we ship to?" });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const finished = await waitFor(
      async () => {
        const run = await alice("GET", `/v1/agents/runs/${id}`);
        return ["succeeded", "failed"].includes(run.body.state) ? run.body : undefined;
      },
      { timeoutMs: 60_000, what: `run ${id} to finish` },
    );
    expect(finished.usage).toEqual(expect.objectContaining({ model_calls: expect.any(Number) }));
    expect((await alice("GET", "/v1/agents/runs?page=1&page_size=5")).body.items.map((r: { id: string }) => r.id)).toContain(id);
    const events = await alice("GET", `/v1/agents/runs/${id}/events?after=0&limit=50`);
    expect(events.body.items[0]).toMatchObject({ seq: 1, type: "run.queued" });
    // Refusals, each a documented problem.
    expect((await alice("POST", `/v1/agents/runs/${id}/cancel`)).status).toBe(409);
    expect((await alice("POST", `/v1/agents/runs/${id}/input`, { answer: "EU" })).status).toBe(409);
    expect((await alice("POST", `/v1/agents/runs/${id}/confirmation`, { decision: "maybe" })).body).toMatchObject({ status: 400, code: 10001 });
    expect((await alice("POST", "/v1/agents/runs", { input: "hi", roles: ["admin"] })).body).toMatchObject({ status: 400, code: 10001 });
    expect((await alice("POST", "/v1/agents/runs", { input: "   " })).body).toMatchObject({ status: 422, code: 10430 });
    expect((await alice("GET", "/v1/agents/runs?page=1&page=2")).body).toMatchObject({ status: 400, code: 10001 });
    expect((await alice("GET", "/v1/agents/runs/not-a-run")).body).toMatchObject({ status: 404, code: 10050 });
    expect((await as("not.a.token")("GET", "/v1/agents/runs")).body).toMatchObject({ status: 401, code: 10011 });
    expect((await alice("GET", "/v1/admin/status")).body).toMatchObject({ status: 403, code: 10031 });
  });

  it("answers the knowledge and administration routes as documented", async () => {
    const root = as(admin);
    const doc = await root("POST", "/v1/knowledge/documents", { title: "Shipping", body: "We ship to the EU." });
    expect(doc.status).toBe(201);
    expect((await root("GET", "/v1/knowledge/documents")).body.total).toBeGreaterThanOrEqual(1);
    expect((await as(member)("GET", `/v1/knowledge/documents/${doc.body.id}`)).body).toMatchObject({
      id: doc.body.id,
      title: "Shipping",
      body: "We ship to the EU.",
    });
    // Another tenant's reader sees it as missing.
    const outsider = await platform.token({ tenant: "otherco", user: "eve", roles: ["member"] });
    expect((await as(outsider)("GET", `/v1/knowledge/documents/${doc.body.id}`)).body).toMatchObject({ status: 404, code: 10050 });
    expect((await root("DELETE", `/v1/knowledge/documents/${doc.body.id}`)).status).toBe(204);
    expect((await root("GET", `/v1/knowledge/documents/${doc.body.id}`)).status).toBe(404);
    expect((await root("PUT", "/v1/admin/members/bob/roles/member", { reason: "joined" })).status).toBe(201);
    expect((await root("GET", "/v1/admin/members/bob")).body.roles).toEqual(["member"]);
    expect((await root("GET", "/v1/admin/members?role=member")).status).toBe(200);
    expect((await root("DELETE", "/v1/admin/members/bob/roles/member")).status).toBe(200);
    expect((await root("GET", "/v1/admin/membership-changes?user_id=bob")).body.items.length).toBe(2);
    expect((await root("PUT", "/v1/admin/datasets/sales", { roles: ["member"] })).status).toBe(201);
    expect((await root("GET", "/v1/admin/datasets")).body.items.length).toBe(1);
    expect((await root("GET", "/v1/admin/dataset-changes")).body.items.length).toBe(1);
    expect((await root("DELETE", "/v1/admin/datasets/sales")).status).toBe(200);
    const sets = await root("GET", "/v1/admin/policies");
    expect(sets.body.items.length).toBeGreaterThanOrEqual(1);
    expect((await root("GET", `/v1/admin/policies/${sets.body.items[0].version}`)).status).toBe(200);
    expect((await root("POST", "/v1/admin/policies/validate", { policies: '@id("all")\npermit (principal, action, resource);' })).body.valid).toBe(true);
    expect(
      (await root("POST", "/v1/admin/policies/dry-run", { user_id: "alice", roles: ["member"], action: "agent.run.read", resource: { type: "run", id: "" } }))
        .status,
    ).toBe(200);
    expect((await root("GET", "/v1/audit/decisions?limit=5")).status).toBe(200);
    expect((await root("GET", "/v1/admin/status")).status).toBe(200);
    expect((await root("GET", "/v1/admin/policies/999999")).body).toMatchObject({ status: 404, code: 10050 });
  });

  it("fails loudly on an answer the document does not describe", async () => {
    const url = platform.gatewayUrl;
    const snapshot = (await as(member)("GET", "/v1/agents/runs?page_size=1")).body.items[0];
    const { state: _dropped, ...withoutState } = snapshot;
    const seen = { method: "GET", path: `/v1/agents/runs/${snapshot.id}`, contentType: "application/json", empty: false };
    await expect(checkAgainstOpenApi(url, { ...seen, status: 200, body: snapshot })).resolves.toBeUndefined();
    await expect(checkAgainstOpenApi(url, { ...seen, status: 200, body: withoutState })).rejects.toThrow(/does not fit the documented schema/);
    await expect(checkAgainstOpenApi(url, { ...seen, status: 418, body: snapshot })).rejects.toThrow(/not documented/);
    await expect(checkAgainstOpenApi(url, { ...seen, status: 200, contentType: "text/plain", body: "x" })).rejects.toThrow(/media type/);
    await expect(checkAgainstOpenApi(url, { ...seen, path: "/v1/nowhere", status: 200, body: {} })).rejects.toThrow(/not in the document/);
    const problem = { type: "https://steward.dev/problems/10050", title: "Not Found", status: 404, code: 10001, detail: "x" };
    await expect(checkAgainstOpenApi(url, { ...seen, status: 404, contentType: "application/problem+json", body: problem })).rejects.toThrow(/code/);
    // Outside the document only a 404 problem is right, and it must be a well-formed one.
    const outside = { ...seen, path: "/v1/nowhere", status: 404, contentType: "application/problem+json" };
    await expect(checkAgainstOpenApi(url, { ...outside, body: { ...problem, code: 10050 } })).resolves.toBeUndefined();
    await expect(checkAgainstOpenApi(url, { ...outside, body: problem })).rejects.toThrow(/code/);
    await expect(checkAgainstOpenApi(url, { ...outside, method: "PATCH", path: seen.path, status: 405, body: problem })).rejects.toThrow(/not in the document/);
  });

  it("holds the suites' own requests to the document: platform.http checks every answer, unknown routes included", async () => {
    const unknown = await platform.http("GET", "/v1/nowhere", { token: member });
    expect(unknown.body).toMatchObject({ status: 404, code: 10050 });
    const wrongMethod = await platform.http("PATCH", "/v1/agents/runs", { token: member, body: {} });
    expect(wrongMethod.status).toBe(404);
  });
});

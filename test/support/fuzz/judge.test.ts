import type { FuzzFixture } from "./fixture";
import type { FuzzRequest } from "./generate";
import { ROUTES } from "./catalogue";
import { createLedger, judge } from "./judge";
import type { Answer } from "./send";
import type { FuzzToken } from "./tokens";

const alicesRun = "00000000-0000-4000-8000-000000000001";
const beasRun = "00000000-0000-4000-8000-000000000002";
const amysRun = "00000000-0000-4000-8000-000000000003";
const alice: FuzzToken = { label: "acme/alice", header: "Bearer a.b.c", expect: "accept", who: { tenant: "acme", user: "alice" } };
const forged: FuzzToken = { label: "alg none", header: "Bearer x.y.", expect: "refuse" };

const fx: FuzzFixture = {
  runs: [
    { id: alicesRun, owner: { tenant: "acme", user: "alice" }, marker: "fzmark-000000000000000a", state: "succeeded" },
    { id: beasRun, owner: { tenant: "beta", user: "bea" }, marker: "fzmark-000000000000000b", state: "succeeded" },
    { id: amysRun, owner: { tenant: "acme", user: "amy" }, marker: "fzmark-000000000000000c", state: "succeeded" },
  ],
  documents: [{ id: "00000000-0000-4000-8000-0000000000d0", tenant: "beta", marker: "fzmark-00000000000000d0" }],
  tenantMarks: [{ tenant: "beta", what: "policy set 2", marker: "fzmark-00000000000000e0" }],
  tokens: [alice, forged],
  defaultPolicies: "",
};

const route = (name: string) => ROUTES.find((r) => r.name === name)!;
const request = (name: string, target: string, token = alice, run?: (typeof fx.runs)[number]): FuzzRequest => ({
  index: 0,
  route: route(name),
  method: route(name).method,
  target,
  headers: {},
  token,
  run,
  mutations: [],
});
const answer = (status: number, body: unknown, type = "application/json"): Answer => ({
  status,
  headers: { "content-type": type },
  text: typeof body === "string" ? body : JSON.stringify(body),
  hang: false,
  streamCut: false,
});
const kinds = (r: FuzzRequest, a: Answer) => judge(r, a, createLedger(fx)).map((f) => f.kind);

describe("the fuzz verdict", () => {
  it("passes a principal's own run and a 4xx problem document", () => {
    expect(
      kinds(
        request("GET /v1/agents/runs/:id", `/v1/agents/runs/${alicesRun}`, alice, fx.runs[0]),
        answer(200, { id: alicesRun, input: "fzmark-000000000000000a" }),
      ),
    ).toEqual([]);
    expect(
      kinds(
        request("GET /v1/agents/runs/:id", `/v1/agents/runs/${beasRun}`, alice, fx.runs[1]),
        answer(404, { status: 404, code: 10050 }, "application/problem+json"),
      ),
    ).toEqual([]);
  });

  it.each([
    ["another user's run answered 2xx", request("GET /v1/agents/runs/:id", `/v1/agents/runs/${amysRun}`, alice, fx.runs[2]), answer(200, { id: amysRun })],
    [
      "another tenant's run marker in a list",
      request("GET /v1/agents/runs", "/v1/agents/runs"),
      answer(200, { items: [{ input: "fzmark-000000000000000b" }] }),
    ],
    ["another user's run id in a list", request("GET /v1/agents/runs", "/v1/agents/runs"), answer(200, { items: [{ id: amysRun }] })],
    [
      "another tenant's document",
      request("GET /v1/knowledge/documents", "/v1/knowledge/documents"),
      answer(200, { items: [{ id: "00000000-0000-4000-8000-0000000000d0" }] }),
    ],
    [
      "another tenant's policy set",
      request("GET /v1/admin/policies", "/v1/admin/policies"),
      answer(200, { items: [{ policies: "// fzmark-00000000000000e0" }] }),
    ],
    ["another tenant's run in the decision log", request("GET /v1/audit/decisions", "/v1/audit/decisions"), answer(200, { items: [{ run_id: beasRun }] })],
  ])("flags %s as a read across principals", (_label, r, a) => {
    expect(kinds(r, a)).toEqual(["read across principals"]);
  });

  it("lets the decision log show the tenant's own runs, and an id the request itself sent", () => {
    expect(kinds(request("GET /v1/audit/decisions", "/v1/audit/decisions"), answer(200, { items: [{ run_id: amysRun, resource: { id: beasRun } }] }))).toEqual(
      [],
    );
    expect(kinds(request("GET /v1/admin/members/:user", `/v1/admin/members/${amysRun}`), answer(200, { user_id: amysRun }))).toEqual([]);
  });

  it("flags a 5xx, a hang, a dropped connection, a bare 4xx and a forged token that got through", () => {
    const list = request("GET /v1/agents/runs", "/v1/agents/runs");
    expect(kinds(list, answer(500, { status: 500, code: 10500 }, "application/problem+json"))).toEqual(["5xx"]);
    expect(kinds(list, { ...answer(0, ""), status: null, hang: true })).toEqual(["hang"]);
    expect(kinds(list, { ...answer(0, ""), status: null, dropped: "ECONNRESET" })).toEqual(["dropped connection"]);
    expect(kinds(list, answer(400, { error: "Bad Request", statusCode: 400 }))).toEqual(["not a problem document"]);
    expect(kinds(list, answer(431, { status: 431 }, "application/problem+json"))).toEqual(["not a problem document"]);
    expect(kinds(request("GET /v1/agents/runs", "/v1/agents/runs", forged), answer(200, { items: [] }))).toEqual(["refused token accepted"]);
    expect(kinds(request("GET /healthz", "/healthz", forged), answer(200, { status: "ok" }))).toEqual([]);
  });

  it("takes the MCP transport's JSON-RPC error on /mcp, and only there; a problem document is still fine there", () => {
    const onSession = request("POST /mcp (on a session)", "/mcp");
    expect(kinds(onSession, answer(404, { jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }))).toEqual([]);
    expect(kinds(onSession, answer(401, { status: 401, code: 10011 }, "application/problem+json"))).toEqual([]);
    expect(kinds(onSession, answer(404, { error: "Not Found" }))).toEqual(["not a problem document"]);
    const list = request("GET /v1/agents/runs", "/v1/agents/runs");
    expect(kinds(list, answer(404, { jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }))).toEqual(["not a problem document"]);
  });
});

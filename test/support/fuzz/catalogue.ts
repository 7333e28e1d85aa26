import type { FuzzFixture, SeededDocument, SeededRun } from "./fixture";
import type { Rng } from "./prng";
import { datasetSegment, documentSegment, oddSegment, roleSegment, runSegment, seededUuid, userSegment, versionSegment } from "./segments";
import type { Who } from "./tokens";
import { fuzzString } from "./values";

/** The path a request names, and the seeded resource it addresses, if any. */
export interface Target {
  readonly path: string;
  readonly run?: SeededRun;
  readonly document?: SeededDocument;
}

/** One route the gateway serves (services/gateway/src/adapters/http/app.ts and routes/*), as the fuzz drives it. */
export interface RouteSpec {
  readonly name: string;
  readonly method: string;
  readonly weight: number;
  /** Answered without credentials (probes, unknown paths): no token rule applies. */
  readonly open?: boolean;
  /** The path; `who` is the principal the request's token names, so that some requests address its own runs. */
  readonly target: (rng: Rng, fx: FuzzFixture, who: Who | undefined) => Target;
  /** A body the route accepts; the generator then bends it. */
  readonly body?: (rng: Rng, fx: FuzzFixture) => unknown;
  /** A query the route accepts, key by key. */
  readonly query?: (rng: Rng, fx: FuzzFixture) => Record<string, string>;
  /** Headers that make the request what the route name says (an event stream). */
  readonly headers?: (rng: Rng) => Record<string, string>;
  /** An administrator's view of the whole tenant: its answers may hold any resource of the caller's tenant. */
  readonly tenantWide?: boolean;
}

const pageQuery = (rng: Rng): Record<string, string> => {
  const q: Record<string, string> = {};
  if (rng.chance(0.5)) q.page = rng.pick(["1", "2", "999999999"]);
  if (rng.chance(0.5)) q.page_size = rng.pick(["1", "20", "100"]);
  return q;
};
const afterQuery = (rng: Rng): Record<string, string> => {
  const q: Record<string, string> = {};
  if (rng.chance(0.5)) q.after = rng.pick(["0", "1", "3", "999999999"]);
  if (rng.chance(0.5)) q.limit = rng.pick(["1", "100", "1000"]);
  return q;
};
const fixed = (path: string) => (): Target => ({ path });
/** An object `depth` levels deep, built without recursion. */
const nested = (depth: number): unknown => {
  let value: unknown = "deep";
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? { a: value } : [value];
  return value;
};
const threadPath = (rng: Rng, suffix = ""): Target => ({ path: `/v1/threads/${rng.chance(0.7) ? seededUuid(rng) : oddSegment(rng)}${suffix}` });
const proposalPath =
  (suffix: string) =>
  (rng: Rng): Target => ({ path: `/v1/knowledge/proposals/${rng.chance(0.7) ? seededUuid(rng) : oddSegment(rng)}${suffix}` });
const adminRunPath =
  (suffix: string) =>
  (rng: Rng, fx: FuzzFixture, who: Who | undefined): Target => {
    const { segment, run } = runSegment(rng, fx, who, false);
    return { path: `/v1/admin/runs/${segment}${suffix}`, run };
  };
const onRun =
  (suffix: string, control = false) =>
  (rng: Rng, fx: FuzzFixture, who: Who | undefined): Target => {
    const { segment, run } = runSegment(rng, fx, who, control);
    return { path: `/v1/agents/runs/${segment}${suffix}`, run };
  };

/** The policy texts an upload sends: the default set (with a comment or not) or text Cedar refuses. */
function policyText(rng: Rng, fx: FuzzFixture): string {
  return rng.pick([
    fx.defaultPolicies,
    `// fuzz ${rng.int(0, 1e6)}\n${fx.defaultPolicies}`,
    fx.defaultPolicies.replace(/;/, ""),
    `permit(${fuzzString(rng)}`,
    `forbid (principal, action, resource) when { ${fuzzString(rng)}`,
    `permit(principal, action, resource) when { 9223372036854775807 + 1 == 0 ` /* unterminated */,
  ]);
}

type Parts = Omit<RouteSpec, "name" | "method" | "weight">;
/** A route by its name (`METHOD /path`), how often it is drawn, and how its requests are made. */
const route = (name: string, weight: number, parts: Parts): RouteSpec => ({ name, method: name.split(" ")[0], weight, ...parts });
const maybe = <T extends object>(rng: Rng, p: number, value: () => T): T | object => (rng.chance(p) ? value() : {});

export const ROUTES: readonly RouteSpec[] = [
  route("POST /v1/agents/runs", 10, {
    target: fixed("/v1/agents/runs"),
    body: (rng) => ({
      input: `fuzz run ${rng.int(0, 1e6)}`,
      ...maybe(rng, 0.3, () => ({ mode: rng.pick(["agent", "ask"]) })),
      ...maybe(rng, 0.3, () => ({ response_language: rng.pick(["en", "de-CH", "zh-Hant-TW"]) })),
      ...maybe(rng, 0.1, () => ({ thread_id: seededUuid(rng) })),
    }),
  }),
  route("GET /v1/agents/runs", 6, {
    target: fixed("/v1/agents/runs"),
    query: (rng) => ({ ...pageQuery(rng), ...maybe(rng, 0.3, () => ({ sort: "created_at desc" })) }),
  }),
  route("GET /v1/agents/runs/:id", 10, { target: onRun("") }),
  route("GET /v1/agents/runs/:id/events", 8, { target: onRun("/events"), query: afterQuery }),
  route("GET /v1/agents/runs/:id/events (SSE)", 5, {
    target: onRun("/events"),
    query: (rng) => maybe(rng, 0.3, () => ({ after: rng.pick(["0", "2", "999"]) })) as Record<string, string>,
    headers: (rng) => ({ accept: "text/event-stream", ...maybe(rng, 0.4, () => ({ "last-event-id": rng.pick(["1", "3", "999"]) })) }),
  }),
  // Fastify answers HEAD for every GET route: an event stream asked for by HEAD must be answered too.
  route("HEAD /v1/agents/runs/:id/events (SSE)", 3, { target: onRun("/events"), headers: () => ({ accept: "text/event-stream" }) }),
  route("POST /v1/agents/runs/:id/input", 6, { target: onRun("/input", true), body: (rng) => ({ answer: rng.pick(["EU", "yes", "Continue exploring"]) }) }),
  route("POST /v1/agents/runs/:id/confirmation", 6, {
    target: onRun("/confirmation", true),
    body: (rng) => ({ decision: rng.pick(["approve", "reject"]), ...maybe(rng, 0.3, () => ({ fingerprint: "ab".repeat(32) })) }),
  }),
  route("POST /v1/agents/runs/:id/cancel", 5, { target: onRun("/cancel", true) }),
  // Threads (docs/threads.md): ids drawn at random (a thread of nobody, mostly 404) or odd; bodies bent by the generator.
  route("POST /v1/threads", 3, {
    target: fixed("/v1/threads"),
    body: (rng) => ({ ...maybe(rng, 0.7, () => ({ title: rng.pick(["Refunds", "😀 émojis", fuzzString(rng)]) })) }),
  }),
  route("GET /v1/threads", 3, { target: fixed("/v1/threads"), query: pageQuery }),
  route("GET /v1/threads/:id", 3, { target: (rng) => threadPath(rng) }),
  route("DELETE /v1/threads/:id", 2, { target: (rng) => threadPath(rng) }),
  route("POST /v1/threads/:id/fork", 2, {
    target: (rng) => threadPath(rng, "/fork"),
    body: (rng, fx) => ({ at_run_id: rng.chance(0.5) ? rng.pick(fx.runs).id : seededUuid(rng), ...maybe(rng, 0.3, () => ({ title: "Fork" })) }),
  }),
  // Governed memory (docs/memory.md): the caller's proposals, the tenant's for admins, and deciding one.
  route("GET /v1/knowledge/proposals", 2, {
    target: fixed("/v1/knowledge/proposals"),
    query: (rng) => ({ ...pageQuery(rng), ...maybe(rng, 0.4, () => ({ status: rng.pick(["pending", "applied", "dismissed", "open"]) })) }),
  }),
  route("GET /v1/knowledge/proposals (tenant)", 1, {
    target: fixed("/v1/knowledge/proposals"),
    query: (rng) => ({ scope: "tenant", ...pageQuery(rng) }),
    tenantWide: true,
  }),
  route("POST /v1/knowledge/proposals/:id/apply", 1, { target: proposalPath("/apply") }),
  route("POST /v1/knowledge/proposals/:id/dismiss", 1, { target: proposalPath("/dismiss") }),
  // The admins' view of every user's runs (docs/admin-runs.md): any run of the caller's tenant may be in an answer.
  route("GET /v1/admin/runs", 2, {
    target: fixed("/v1/admin/runs"),
    tenantWide: true,
    query: (rng) => ({
      ...pageQuery(rng),
      ...maybe(rng, 0.3, () => ({ user: rng.pick(["alice", "zed", ""]) })),
      ...maybe(rng, 0.3, () => ({ state: rng.pick(["succeeded", "awaiting_input", "done"]) })),
      ...maybe(rng, 0.2, () => ({ code: rng.pick(["60405", "0", "x"]) })),
      ...maybe(rng, 0.2, () => ({ created_after: rng.pick(["2026-01-01", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00", "yesterday"]) })),
    }),
  }),
  route("GET /v1/admin/runs/:id", 2, { target: adminRunPath(""), tenantWide: true }),
  route("GET /v1/admin/runs/:id/events", 2, { target: adminRunPath("/events"), query: afterQuery, tenantWide: true }),
  route("GET /v1/audit/admin-reads", 1, { target: fixed("/v1/audit/admin-reads"), query: pageQuery, tenantWide: true }),
  // The record of MCP sessions (docs/mcp.md): any session of the caller's tenant may be in an answer.
  route("GET /v1/audit/mcp-sessions", 1, {
    target: fixed("/v1/audit/mcp-sessions"),
    tenantWide: true,
    query: (rng) => ({
      ...pageQuery(rng),
      ...maybe(rng, 0.3, () => ({ user_id: rng.pick(["alice", "zed", ""]) })),
      ...maybe(rng, 0.3, () => ({ mode: rng.pick(["observe", "execute", "admin", "root"]) })),
      ...maybe(rng, 0.3, () => ({ open: rng.pick(["true", "false", "yes"]) })),
    }),
  }),
  route("POST /v1/knowledge/documents", 3, {
    target: fixed("/v1/knowledge/documents"),
    body: (rng) => ({ title: `fuzz doc ${rng.int(0, 1e6)}`, body: "Some text.", ...maybe(rng, 0.3, () => ({ format: rng.pick(["text", "markdown"]) })) }),
  }),
  route("GET /v1/knowledge/documents", 3, { target: fixed("/v1/knowledge/documents"), query: pageQuery }),
  route("DELETE /v1/knowledge/documents/:id", 2, {
    target: (rng, fx) => {
      const { segment, document } = documentSegment(rng, fx);
      return { path: `/v1/knowledge/documents/${segment}`, document };
    },
  }),
  route("GET /v1/admin/policies", 2, { target: fixed("/v1/admin/policies") }),
  route("GET /v1/admin/policies/:version", 2, { target: (rng) => ({ path: `/v1/admin/policies/${versionSegment(rng)}` }) }),
  route("POST /v1/admin/policies/validate", 2, {
    target: fixed("/v1/admin/policies/validate"),
    body: (rng, fx) => ({ policies: rng.chance(0.5) ? policyText(rng, fx) : fuzzString(rng) }),
  }),
  route("POST /v1/admin/policies", 1, { target: fixed("/v1/admin/policies"), body: (rng, fx) => ({ policies: policyText(rng, fx) }) }),
  route("POST /v1/admin/policies/:version/activate", 1, { target: (rng) => ({ path: `/v1/admin/policies/${versionSegment(rng)}/activate` }) }),
  route("POST /v1/admin/policies/dry-run", 2, {
    target: fixed("/v1/admin/policies/dry-run"),
    body: (rng) => ({
      user_id: rng.pick(["alice", "bea", "zed"]),
      roles: [rng.pick(["member", "admin"])],
      action: rng.pick(["agent.run.read", "policy.admin", "dataset.read"]),
      resource: { type: "run", id: seededUuid(rng) },
      ...maybe(rng, 0.3, () => ({ version: rng.int(1, 3), elevated: rng.chance(0.5) })),
    }),
  }),
  route("POST /v1/admin/elevations", 1, {
    target: fixed("/v1/admin/elevations"),
    body: (rng) => ({ user_id: rng.pick(["alice", "zed"]), actions: ["dataset.read"], ttl_seconds: rng.pick([1, 60, 86_400]) }),
  }),
  route("POST /v1/admin/elevations/:id/revoke", 1, {
    target: (rng) => ({ path: `/v1/admin/elevations/${rng.chance(0.7) ? seededUuid(rng) : oddSegment(rng)}/revoke` }),
  }),
  route("GET /v1/audit/decisions", 2, {
    target: fixed("/v1/audit/decisions"),
    query: (rng, fx) => ({ ...maybe(rng, 0.6, () => ({ run_id: rng.chance(0.8) ? rng.pick(fx.runs).id : seededUuid(rng) })), ...afterQuery(rng) }),
  }),
  route("GET /v1/admin/status", 2, { target: fixed("/v1/admin/status") }),
  route("GET /v1/admin/members", 2, {
    target: fixed("/v1/admin/members"),
    query: (rng) => ({ ...pageQuery(rng), ...maybe(rng, 0.3, () => ({ role: rng.pick(["member", "admin"]) })) }),
  }),
  route("GET /v1/admin/members/:user", 2, { target: (rng) => ({ path: `/v1/admin/members/${userSegment(rng, true)}` }) }),
  route("PUT /v1/admin/members/:user/roles/:role", 2, {
    target: (rng) => ({ path: `/v1/admin/members/${userSegment(rng, true)}/roles/${roleSegment(rng)}` }),
    body: (rng) => (rng.chance(0.5) ? { reason: "fuzz" } : undefined),
  }),
  // Never a core principal: revoking their roles would leave the rest of the fuzz answering 403.
  route("DELETE /v1/admin/members/:user/roles/:role", 2, {
    target: (rng) => ({ path: `/v1/admin/members/${userSegment(rng, false)}/roles/${roleSegment(rng)}` }),
    body: (rng) => (rng.chance(0.5) ? { reason: "fuzz" } : undefined),
  }),
  route("GET /v1/admin/membership-changes", 2, {
    target: fixed("/v1/admin/membership-changes"),
    query: (rng) => ({ ...maybe(rng, 0.4, () => ({ user_id: rng.pick(["alice", "zed"]) })), ...afterQuery(rng) }),
  }),
  route("GET /v1/admin/datasets", 2, { target: fixed("/v1/admin/datasets") }),
  route("PUT /v1/admin/datasets/:dataset", 2, {
    target: (rng) => ({ path: `/v1/admin/datasets/${datasetSegment(rng)}` }),
    body: (rng) => (rng.chance(0.3) ? undefined : { roles: rng.pick([[], ["member"], ["analyst", "admin"]]), ...maybe(rng, 0.5, () => ({ reason: "fuzz" })) }),
  }),
  route("DELETE /v1/admin/datasets/:dataset", 1, {
    target: (rng) => ({ path: `/v1/admin/datasets/${datasetSegment(rng)}` }),
    body: (rng) => (rng.chance(0.5) ? { reason: "fuzz" } : undefined),
  }),
  route("GET /v1/admin/dataset-changes", 2, {
    target: fixed("/v1/admin/dataset-changes"),
    query: (rng) => ({ ...maybe(rng, 0.4, () => ({ dataset: rng.pick(["fuzz_marked", "demo", "Bad"]) })), ...afterQuery(rng) }),
  }),
  // Steward as an MCP server (docs/mcp.md): the initialize request in a mode (some the caller may not
  // open), and requests on sessions drawn at random (an unknown session, or somebody else's: the same answer).
  route("POST /mcp (initialize)", 2, {
    target: fixed("/mcp"),
    headers: (rng) => ({
      accept: rng.pick(["application/json, text/event-stream", "application/json", "text/event-stream"]),
      ...maybe(rng, 0.7, () => ({ "steward-mcp-mode": rng.pick(["observe", "execute", "admin", "root", ""]) })),
    }),
    body: (rng) => ({
      jsonrpc: "2.0",
      id: rng.int(0, 1000),
      method: "initialize",
      params: { protocolVersion: rng.pick(["2025-06-18", "2025-03-26", "1999-01-01"]), capabilities: {}, clientInfo: { name: "fuzz", version: "1" } },
    }),
  }),
  route("POST /mcp (on a session)", 2, {
    target: fixed("/mcp"),
    headers: (rng) => ({
      accept: "application/json, text/event-stream",
      ...maybe(rng, 0.9, () => ({ "mcp-session-id": rng.chance(0.8) ? seededUuid(rng) : oddSegment(rng) })),
    }),
    body: (rng) =>
      rng.pick([
        { jsonrpc: "2.0", id: 1, method: "tools/list" },
        { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "get_run", arguments: { run_id: seededUuid(rng) } } },
        { jsonrpc: "2.0", method: "notifications/initialized" },
      ]),
  }),
  // JSON-RPC batches (refused whole: one request, one call, as the limits count) and arguments nested deeper than
  // the gateway's bound (refused before anything reads them), at every size the generator bends them to.
  route("POST /mcp (batch)", 2, {
    target: fixed("/mcp"),
    headers: (rng) => ({ accept: "application/json, text/event-stream", "mcp-session-id": seededUuid(rng) }),
    body: (rng) =>
      Array.from({ length: rng.pick([1, 2, 10, 100, 500]) }, (_, i) => ({
        jsonrpc: "2.0",
        id: i,
        method: "tools/call",
        params: { name: "invoke_capability", arguments: { capability_id: "tool:test_counter", arguments: {} } },
      })),
  }),
  route("POST /mcp (nested arguments)", 2, {
    target: fixed("/mcp"),
    headers: (rng) => ({ accept: "application/json, text/event-stream", "mcp-session-id": seededUuid(rng) }),
    body: (rng) => ({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "invoke_capability", arguments: { capability_id: "tool:save_note", arguments: nested(rng.pick([8, 30, 33, 200, 1_000])) } },
    }),
  }),
  route("GET /mcp", 1, { target: fixed("/mcp"), headers: (rng) => ({ accept: "text/event-stream", "mcp-session-id": seededUuid(rng) }) }),
  route("DELETE /mcp", 1, { target: fixed("/mcp"), headers: (rng): Record<string, string> => (rng.chance(0.8) ? { "mcp-session-id": seededUuid(rng) } : {}) }),
  route("GET /healthz", 1, { open: true, target: fixed("/healthz") }),
  route("GET /readyz", 1, { open: true, target: fixed("/readyz") }),
  route("GET unknown paths", 3, {
    open: true,
    target: (rng) => ({
      path: rng.pick([
        "/",
        "/v1",
        "/v2/agents/runs",
        "/v1/agents",
        "/v1/agents/runs/x/y/z",
        "/admin",
        "/.env",
        "/metrics",
        "/v1/knowledge",
        `/${oddSegment(rng)}`,
      ]),
    }),
  }),
];

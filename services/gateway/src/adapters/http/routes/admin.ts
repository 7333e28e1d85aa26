import { Type, type Static } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import type { PolicyAdminApi, PolicySetInfo } from "@steward/proto";
import { fromGrpc } from "../grpc-errors";
import { principalOf, resourcePolicy } from "../route-guard";
import { problemResponses } from "../openapi/problems";
import { ListRunsQuery, Nullable, UUID_PATTERN } from "../schemas";
import { pageOf } from "../../../domain/page";

export interface AdminRoutesDeps {
  readonly policyAdmin: PolicyAdminApi;
  /** The record of MCP sessions (main.ts: PostgreSQL's mcp_sessions). */
  readonly mcpSessionLog: McpSessionLog;
}

/** Which recorded MCP sessions to list; an absent filter does not filter. */
export interface McpSessionFilter {
  readonly userId?: string;
  readonly mode?: "observe" | "execute" | "admin";
  /** true: only sessions not closed; false: only closed ones. */
  readonly open?: boolean;
}

/** The durable record of MCP sessions, as the audit reads it (the gateway's session registry writes it). */
export interface McpSessionLog {
  /** One page of a tenant's sessions that pass the filter, newest first, and their total. */
  list(tenantId: string, filter: McpSessionFilter, page: { page: number; pageSize: number }): Promise<{ items: McpSessionItem[]; total: number }>;
}

const PoliciesBody = Type.Object(
  { policies: Type.String({ minLength: 1, maxLength: 200_000, description: "Cedar policies" }) },
  { additionalProperties: false, examples: [{ policies: 'permit (principal, action == Action::"agent.run.read", resource);' }] },
);
const PolicyListQuery = Type.Object(
  {
    before: Type.Optional(Type.String({ pattern: "^[1-9][0-9]{0,8}$", description: "Only versions below this one" })),
    limit: Type.Optional(Type.String({ pattern: "^([1-9]|10)$", description: "At most this many sets (default 10)" })),
  },
  { additionalProperties: false },
);
const DryRunBody = Type.Object(
  {
    // int32 on the wire (PolicyAdmin.DryRun): a larger number is a bad request, not a failed encoding.
    version: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647 })),
    user_id: Type.String({ minLength: 1, maxLength: 256 }),
    roles: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 32 }),
    action: Type.String({ minLength: 1, maxLength: 128 }),
    resource: Type.Object({ type: Type.String({ maxLength: 32 }), id: Type.String({ maxLength: 256 }) }, { additionalProperties: false }),
    elevated: Type.Optional(Type.Boolean()),
  },
  {
    additionalProperties: false,
    examples: [{ user_id: "alice", roles: ["member"], action: "agent.run.create", resource: { type: "run", id: "" } }],
  },
);
const ElevationBody = Type.Object(
  {
    user_id: Type.String({ minLength: 1, maxLength: 256 }),
    actions: Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { minItems: 1, maxItems: 32 }),
    ttl_seconds: Type.Integer({ minimum: 1, maximum: 86_400 }),
  },
  { additionalProperties: false, examples: [{ user_id: "alice", actions: ["knowledge.document.write"], ttl_seconds: 900 }] },
);
const DecisionsQuery = Type.Object(
  {
    run_id: Type.Optional(Type.String({ pattern: UUID_PATTERN.source })),
    mcp_session_id: Type.Optional(Type.String({ pattern: UUID_PATTERN.source, description: "Only the decisions of this MCP session (docs/mcp.md)" })),
    after: Type.Optional(Type.String({ pattern: "^(0|[1-9][0-9]{0,17})$" })),
    limit: Type.Optional(Type.String({ pattern: "^([1-9]|[1-9][0-9]{1,2}|1000)$" })),
  },
  { additionalProperties: false },
);

/** GET /v1/audit/mcp-sessions: each key at most once. */
const McpSessionsQuery = Type.Object(
  {
    user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256, pattern: "^[^\\u0000-\\u001f\\u007f-\\u009f]+$", description: "The session's user" })),
    mode: Type.Optional(Type.Union([Type.Literal("observe"), Type.Literal("execute"), Type.Literal("admin")], { description: "The session's mode" })),
    open: Type.Optional(Type.Union([Type.Literal("true"), Type.Literal("false")], { description: "true: only sessions still open; false: only closed ones" })),
    page: ListRunsQuery.properties.page,
    page_size: ListRunsQuery.properties.page_size,
  },
  { additionalProperties: false },
);

const McpSessionItem = Type.Object({
  id: Type.String({ description: "The session's id: the Mcp-Session-Id its client was given, and the decisions' mcp_session_id" }),
  user_id: Type.String(),
  mode: Type.Union([Type.Literal("observe"), Type.Literal("execute"), Type.Literal("admin")]),
  opened_at: Type.String({ description: "When it was opened, before its initialize was answered (UTC, microseconds)" }),
  closed_at: Nullable(Type.String({ description: "When it was closed; null while open (or when its gateway ended without closing it)" })),
  close_reason: Nullable(
    Type.String({
      description:
        "Why it closed: idle, the client ended it, the user opened more sessions than the bound, the gateway is stopping, its transport closed, its initialize failed",
    }),
  ),
});
type McpSessionItem = Static<typeof McpSessionItem>;

const McpSessionPage = Type.Object({
  items: Type.Array(McpSessionItem, { description: "Newest first" }),
  page: Type.Integer(),
  page_size: Type.Integer(),
  total: Type.Integer({ description: "Sessions that pass the filters" }),
});

const setView = (s: PolicySetInfo) => ({
  version: s.version,
  status: s.status,
  policy_ids: s.policyIds,
  policies: s.policies,
  created_by: s.createdBy,
  created_at: s.createdAt,
  activated_at: s.activatedAt || null,
});

const PolicySet = Type.Object({
  version: Type.Integer(),
  status: Type.String({ description: "draft, active or retired" }),
  policy_ids: Type.Array(Type.String()),
  policies: Type.String(),
  created_by: Type.String(),
  created_at: Type.String(),
  activated_at: Nullable(Type.String()),
});
const Elevation = Type.Object({
  id: Type.String(),
  user_id: Type.String(),
  actions: Type.Array(Type.String()),
  expires_at: Type.String(),
  revoked_at: Nullable(Type.String()),
});
const Validation = Type.Object({
  valid: Type.Boolean(),
  policy_ids: Type.Array(Type.String()),
  issues: Type.Array(Type.Object({ policy_id: Type.String(), message: Type.String() })),
});
const DryRun = Type.Object({
  permit: Type.Boolean(),
  code: Nullable(Type.String({ description: 'The code a live call would get (e.g. "60500" denied, "60503" a policy errored); null on permit' })),
  policy_ids: Type.Array(Type.String()),
  version: Type.Integer(),
  errors: Type.Array(Type.String()),
});
export const Decision = Type.Object({
  id: Type.Integer(),
  decided_at: Type.String(),
  user_id: Type.String(),
  action: Type.String(),
  resource: Type.Object({ type: Type.String(), id: Type.String() }),
  run_id: Nullable(Type.String()),
  step_no: Nullable(Type.Integer()),
  fingerprint: Nullable(Type.String()),
  elevation_session_id: Nullable(Type.String()),
  mcp_session_id: Nullable(Type.String({ description: "The MCP session the decision was made for (docs/mcp.md); null outside MCP" })),
  mcp_mode: Nullable(Type.String({ description: "That session's mode: observe, execute or admin" })),
  permit: Type.Boolean(),
  code: Nullable(Type.String()),
  policy_ids: Type.Array(Type.String()),
  policy_version: Nullable(Type.Integer()),
  latency_ms: Type.Number(),
});
const VersionParams = Type.Object({ version: Type.String({ pattern: "^[1-9][0-9]{0,8}$", description: "A policy set version" }) });
const ElevationParams = Type.Object({ id: Type.String({ pattern: UUID_PATTERN.source, description: "An elevation session id" }) });

const POLICY_ADMIN = { policy: resourcePolicy("policy.admin") };
const common = (tags: string[], summary: string, description: string) => ({ tags, summary, description, security: [{ bearerAuth: [] }] });
const policies = (summary: string, description: string) => common(["policies"], summary, `${description} Policy point policy.admin.`);

/** Tenant administration: policy sets (upload, validate, dry-run, activate), elevations, the decision log, MCP sessions. */
export function registerAdminRoutes(app: FastifyInstance, deps: AdminRoutesDeps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const call = async <T>(work: Promise<T>): Promise<T> => work.catch((err: unknown) => Promise.reject(fromGrpc(err)));

  api.get(
    "/v1/admin/policies",
    {
      config: POLICY_ADMIN,
      schema: {
        ...policies(
          "List policy sets",
          "The tenant's policy sets, newest first, a page at a time: at most `limit` (1-10, default 10) below version `before`. `next_before` is the `before` of the next page, null on the last.",
        ),
        querystring: PolicyListQuery,
        response: { 200: Type.Object({ items: Type.Array(PolicySet), next_before: Type.Union([Type.Integer(), Type.Null()]) }), ...problemResponses() },
      },
    },
    async (request) => {
      const q = request.query;
      const page = await call(
        deps.policyAdmin.listPolicySets({ tenantId: principalOf(request).tenantId, beforeVersion: Number(q.before ?? 0), limit: Number(q.limit ?? 10) }),
      );
      // More below: the next page starts under this page's oldest set.
      return { items: page.sets.map(setView), next_before: page.hasMore ? page.sets[page.sets.length - 1].version : null };
    },
  );

  api.get(
    "/v1/admin/policies/:version",
    {
      config: { ...POLICY_ADMIN, notFound: "policy set version not found" },
      schema: {
        ...policies("Read a policy set", "One policy set of the tenant."),
        params: VersionParams,
        response: { 200: PolicySet, ...problemResponses({ notFound: true }) },
      },
    },
    async (request) => {
      const tenantId = principalOf(request).tenantId;
      return setView(await call(deps.policyAdmin.getPolicySet({ tenantId, version: Number(request.params.version) })));
    },
  );

  api.post(
    "/v1/admin/policies/validate",
    {
      config: POLICY_ADMIN,
      schema: {
        ...policies("Validate policies", "Checks Cedar policies without storing them."),
        body: PoliciesBody,
        response: { 200: Validation, ...problemResponses({ body: true }) },
      },
    },
    async (request) => {
      const r = await call(deps.policyAdmin.validatePolicySet({ policies: request.body.policies }));
      return { valid: r.valid, policy_ids: r.policyIds, issues: r.issues.map((i) => ({ policy_id: i.policyId, message: i.message })) };
    },
  );

  api.post(
    "/v1/admin/policies",
    {
      config: POLICY_ADMIN,
      schema: {
        ...policies("Upload a policy set", "Stores a new draft policy set; invalid policies are 422."),
        body: PoliciesBody,
        response: { 201: PolicySet, ...problemResponses({ body: true }) },
      },
    },
    async (request, reply) => {
      const p = principalOf(request);
      const set = await call(deps.policyAdmin.uploadPolicySet({ tenantId: p.tenantId, policies: request.body.policies, createdBy: p.userId }));
      return reply.status(201).send(setView(set));
    },
  );

  api.post(
    "/v1/admin/policies/:version/activate",
    {
      config: { ...POLICY_ADMIN, notFound: "policy set version not found" },
      schema: {
        ...policies("Activate a policy set", "Makes a version the tenant's active policy set."),
        params: VersionParams,
        response: { 200: PolicySet, ...problemResponses({ notFound: true }) },
      },
    },
    async (request) => {
      const p = principalOf(request);
      return setView(await call(deps.policyAdmin.activatePolicySet({ tenantId: p.tenantId, version: Number(request.params.version), activatedBy: p.userId })));
    },
  );

  api.post(
    "/v1/admin/policies/dry-run",
    {
      config: POLICY_ADMIN,
      schema: {
        ...policies("Dry-run a decision", "The decision a live call would get, as the audit log would show it (the active set, or `version`)."),
        body: DryRunBody,
        response: { 200: DryRun, ...problemResponses({ body: true, notFound: true }) },
      },
    },
    async (request) => {
      const p = principalOf(request);
      const b = request.body;
      const r = await call(
        deps.policyAdmin.dryRun({
          tenantId: p.tenantId,
          version: b.version ?? 0,
          userId: b.user_id,
          roles: b.roles,
          action: b.action,
          resourceType: b.resource.type,
          resourceId: b.resource.id,
          elevated: b.elevated ?? false,
        }),
      );
      // The decision a live call would get, its code included (60503 when a policy errors), as the audit log shows it.
      return { permit: r.permit, code: r.code || null, policy_ids: r.policyIds, version: r.version, errors: r.errors };
    },
  );

  api.post(
    "/v1/admin/elevations",
    {
      config: POLICY_ADMIN,
      schema: {
        ...common(["elevations"], "Grant an elevation", "A time-boxed elevation of a user for some actions. Policy point policy.admin."),
        body: ElevationBody,
        response: { 201: Elevation, ...problemResponses({ body: true }) },
      },
    },
    async (request, reply) => {
      const p = principalOf(request);
      const b = request.body;
      const e = await call(
        deps.policyAdmin.createElevation({ tenantId: p.tenantId, userId: b.user_id, actions: b.actions, ttlSeconds: b.ttl_seconds, grantedBy: p.userId }),
      );
      return reply.status(201).send({ id: e.id, user_id: e.userId, actions: e.actions, expires_at: e.expiresAt, revoked_at: e.revokedAt || null });
    },
  );

  api.post(
    "/v1/admin/elevations/:id/revoke",
    {
      config: { ...POLICY_ADMIN, notFound: "elevation session not found" },
      schema: {
        ...common(["elevations"], "Revoke an elevation", "Ends an elevation session at once. Policy point policy.admin."),
        params: ElevationParams,
        response: { 200: Elevation, ...problemResponses({ notFound: true }) },
      },
    },
    async (request) => {
      const e = await call(deps.policyAdmin.revokeElevation({ tenantId: principalOf(request).tenantId, id: request.params.id }));
      return { id: e.id, user_id: e.userId, actions: e.actions, expires_at: e.expiresAt, revoked_at: e.revokedAt || null };
    },
  );

  api.get(
    "/v1/audit/decisions",
    {
      config: { policy: resourcePolicy("audit.decision.read") },
      schema: {
        ...common(["audit"], "The decision log", "The tenant's recorded policy decisions, oldest first, after `after`. Policy point audit.decision.read."),
        querystring: DecisionsQuery,
        response: { 200: Type.Object({ items: Type.Array(Decision), next_after: Type.Integer() }), ...problemResponses() },
      },
    },
    async (request) => {
      const q = request.query;
      const { decisions } = await call(
        deps.policyAdmin.queryDecisions({
          tenantId: principalOf(request).tenantId,
          runId: q.run_id ?? "",
          mcpSessionId: q.mcp_session_id ?? "",
          afterId: Number(q.after ?? 0),
          limit: Number(q.limit ?? 100),
        }),
      );
      const items = decisions.map((d) => ({
        id: d.id,
        decided_at: d.decidedAt,
        user_id: d.userId,
        action: d.action,
        resource: { type: d.resourceType, id: d.resourceId },
        run_id: d.runId || null,
        step_no: d.stepNo || null,
        fingerprint: d.fingerprint || null,
        elevation_session_id: d.elevationSessionId || null,
        mcp_session_id: d.mcpSessionId || null,
        mcp_mode: d.mcpMode || null,
        permit: d.permit,
        code: d.code || null,
        policy_ids: d.policyIds,
        policy_version: d.policyVersion || null,
        latency_ms: d.latencyMs,
      }));
      return { items, next_after: items.length ? items[items.length - 1].id : Number(q.after ?? 0) };
    },
  );

  api.get(
    "/v1/audit/mcp-sessions",
    {
      config: { policy: resourcePolicy("audit.decision.read") },
      schema: {
        ...common(
          ["audit"],
          "The MCP sessions",
          "The tenant's MCP sessions (docs/mcp.md), newest first: who opened each, in which mode, when, and when and why it closed. What a session did is `GET /v1/audit/decisions?mcp_session_id=`. Policy point audit.decision.read.",
        ),
        querystring: McpSessionsQuery,
        response: { 200: { ...McpSessionPage, description: "A page of sessions" }, ...problemResponses() },
      },
    },
    async (request) => {
      const q = request.query;
      const filter: McpSessionFilter = {
        ...(q.user_id !== undefined ? { userId: q.user_id } : {}),
        ...(q.mode !== undefined ? { mode: q.mode } : {}),
        ...(q.open !== undefined ? { open: q.open === "true" } : {}),
      };
      const { page, pageSize } = pageOf(q);
      const { items, total } = await deps.mcpSessionLog.list(principalOf(request).tenantId, filter, { page, pageSize });
      return { items, page, page_size: pageSize, total };
    },
  );
}

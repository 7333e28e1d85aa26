import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { PolicyPoint } from "@steward/contract";
import { NotFoundError } from "@steward/platform";
import type { PolicyAdminApi, PolicySetInfo } from "@steward/proto";
import type { Authenticate, Principal } from "../auth";
import type { Authorize } from "../../../app/authorize";
import { fromGrpc } from "../grpc-errors";
import { UUID_PATTERN, parseOr400, singleValuedQuery } from "../schemas";
import { traceparentOf } from "./runs";

export interface AdminRoutesDeps {
  readonly authenticate: Authenticate;
  readonly authorize: Authorize;
  readonly policyAdmin: PolicyAdminApi;
}

const PoliciesBody = Type.Object({ policies: Type.String({ minLength: 1, maxLength: 200_000 }) }, { additionalProperties: false });
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
  { additionalProperties: false },
);
const ElevationBody = Type.Object(
  {
    user_id: Type.String({ minLength: 1, maxLength: 256 }),
    actions: Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { minItems: 1, maxItems: 32 }),
    ttl_seconds: Type.Integer({ minimum: 1, maximum: 86_400 }),
  },
  { additionalProperties: false },
);
const DecisionsQuery = Type.Object(
  {
    run_id: Type.Optional(Type.String({ pattern: UUID_PATTERN.source })),
    after: Type.Optional(Type.String({ pattern: "^(0|[1-9][0-9]{0,17})$" })),
    limit: Type.Optional(Type.String({ pattern: "^([1-9]|[1-9][0-9]{1,2}|1000)$" })),
  },
  { additionalProperties: false },
);

const setView = (s: PolicySetInfo) => ({
  version: s.version,
  status: s.status,
  policy_ids: s.policyIds,
  policies: s.policies,
  created_by: s.createdBy,
  created_at: s.createdAt,
  activated_at: s.activatedAt || null,
});

/** Tenant administration: policy sets (upload, validate, dry-run, activate), elevations, the decision log. */
export function registerAdminRoutes(app: FastifyInstance, deps: AdminRoutesDeps): void {
  async function guard(request: FastifyRequest, point: PolicyPoint): Promise<Principal> {
    const principal = await deps.authenticate(request.headers.authorization);
    await deps.authorize(principal, point, { type: "resource", id: point }, traceparentOf(request));
    return principal;
  }
  const call = async <T>(work: Promise<T>): Promise<T> => work.catch((err: unknown) => Promise.reject(fromGrpc(err)));
  const versionOf = (request: FastifyRequest): number => {
    const v = (request.params as { version: string }).version;
    if (!/^[1-9][0-9]{0,8}$/.test(v)) throw new NotFoundError("policy set version not found");
    return Number(v);
  };

  app.get("/v1/admin/policies", async (request) => {
    const p = await guard(request, "policy.admin");
    const { sets } = await call(deps.policyAdmin.listPolicySets({ tenantId: p.tenantId }));
    return { items: sets.map(setView) };
  });

  app.get("/v1/admin/policies/:version", async (request) => {
    const p = await guard(request, "policy.admin");
    return setView(await call(deps.policyAdmin.getPolicySet({ tenantId: p.tenantId, version: versionOf(request) })));
  });

  app.post("/v1/admin/policies/validate", async (request) => {
    await guard(request, "policy.admin");
    const body = parseOr400(PoliciesBody, request.body, "the request body");
    const r = await call(deps.policyAdmin.validatePolicySet({ policies: body.policies }));
    return { valid: r.valid, policy_ids: r.policyIds, issues: r.issues.map((i) => ({ policy_id: i.policyId, message: i.message })) };
  });

  app.post("/v1/admin/policies", async (request, reply) => {
    const p = await guard(request, "policy.admin");
    const body = parseOr400(PoliciesBody, request.body, "the request body");
    const set = await call(deps.policyAdmin.uploadPolicySet({ tenantId: p.tenantId, policies: body.policies, createdBy: p.userId }));
    return reply.status(201).send(setView(set));
  });

  app.post("/v1/admin/policies/:version/activate", async (request) => {
    const p = await guard(request, "policy.admin");
    return setView(await call(deps.policyAdmin.activatePolicySet({ tenantId: p.tenantId, version: versionOf(request), activatedBy: p.userId })));
  });

  app.post("/v1/admin/policies/dry-run", async (request) => {
    const p = await guard(request, "policy.admin");
    const b = parseOr400(DryRunBody, request.body, "the request body");
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
  });

  app.post("/v1/admin/elevations", async (request, reply) => {
    const p = await guard(request, "policy.admin");
    const b = parseOr400(ElevationBody, request.body, "the request body");
    const e = await call(deps.policyAdmin.createElevation({ tenantId: p.tenantId, userId: b.user_id, actions: b.actions, ttlSeconds: b.ttl_seconds, grantedBy: p.userId }));
    return reply.status(201).send({ id: e.id, user_id: e.userId, actions: e.actions, expires_at: e.expiresAt, revoked_at: e.revokedAt || null });
  });

  app.post("/v1/admin/elevations/:id/revoke", async (request) => {
    const p = await guard(request, "policy.admin");
    const id = (request.params as { id: string }).id;
    if (!UUID_PATTERN.test(id)) throw new NotFoundError("elevation session not found");
    const e = await call(deps.policyAdmin.revokeElevation({ tenantId: p.tenantId, id }));
    return { id: e.id, user_id: e.userId, actions: e.actions, expires_at: e.expiresAt, revoked_at: e.revokedAt || null };
  });

  app.get("/v1/audit/decisions", async (request) => {
    const p = await guard(request, "audit.decision.read");
    const q = parseOr400(DecisionsQuery, singleValuedQuery(request.query), "the query");
    const { decisions } = await call(
      deps.policyAdmin.queryDecisions({ tenantId: p.tenantId, runId: q.run_id ?? "", afterId: Number(q.after ?? 0), limit: Number(q.limit ?? 100) }),
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
      permit: d.permit,
      code: d.code || null,
      policy_ids: d.policyIds,
      policy_version: d.policyVersion || null,
      latency_ms: d.latencyMs,
    }));
    return { items, next_after: items.length ? items[items.length - 1].id : Number(q.after ?? 0) };
  });
}

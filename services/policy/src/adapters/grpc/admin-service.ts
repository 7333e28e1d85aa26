import { grpc, grpcError, type Logger } from "@steward/platform";
import type { DecisionRecord, Elevation, PolicyAdminServer, PolicySetInfo } from "@steward/proto";
import { AdminInputError, AdminNotFoundError, type PolicyAdmin } from "../../app/admin";
import type { DecisionRow, PolicySetRow } from "@steward/pdp";
import type { ElevationRecord } from "../../app/elevations";

const setInfo = (r: PolicySetRow): PolicySetInfo => ({
  tenantId: r.tenant_id,
  version: r.version,
  status: r.status,
  policies: r.policies,
  policyIds: r.policy_ids,
  createdBy: r.created_by,
  createdAt: r.created_at,
  activatedAt: r.activated_at ?? "",
});

const decisionRecord = (r: DecisionRow): DecisionRecord => ({
  id: r.id,
  decidedAt: r.decided_at,
  tenantId: r.tenant_id,
  userId: r.user_id,
  action: r.action,
  resourceType: r.resource_type,
  resourceId: r.resource_id,
  runId: r.run_id ?? "",
  stepNo: r.step_no ?? 0,
  fingerprint: r.fingerprint ?? "",
  permit: r.permit,
  code: r.code,
  policyIds: r.policy_ids,
  policyVersion: r.policy_version ?? 0,
  latencyMs: r.latency_ms,
  elevationSessionId: r.elevation_session_id ?? "",
  mcpSessionId: r.mcp_session_id ?? "",
  mcpMode: r.mcp_mode ?? "",
});

const elevation = (e: ElevationRecord): Elevation => ({
  id: e.id,
  tenantId: e.tenant_id,
  userId: e.user_id,
  actions: e.actions,
  expiresAt: e.expires_at,
  revokedAt: e.revoked_at ?? "",
  grantedBy: e.granted_by,
});

/** The PolicyAdmin gRPC service. Errors map once: bad input → INVALID_ARGUMENT, missing → NOT_FOUND. */
export function policyAdminService(admin: PolicyAdmin, logger: Logger): PolicyAdminServer {
  function respond<T>(work: () => Promise<T>, callback: (err: grpc.ServiceError | null, value?: T) => void): void {
    work()
      .then((v) => callback(null, v))
      .catch((err: unknown) => {
        if (err instanceof AdminInputError) {
          const detail = [err.message, ...err.issues.map((i) => `${i.policyId ? `${i.policyId}: ` : ""}${i.message}`)].join("\n");
          callback(grpcError(grpc.status.INVALID_ARGUMENT, detail));
        } else if (err instanceof AdminNotFoundError) {
          callback(grpcError(grpc.status.NOT_FOUND, err.message));
        } else {
          logger.error({ err }, "policy admin call failed");
          callback(grpcError(grpc.status.UNKNOWN, "policy admin call failed"));
        }
      });
  }
  const tenant = (id: string) => {
    if (!id) throw new AdminInputError("tenant_id is required");
    return id;
  };
  return {
    listPolicySets: (call, cb) =>
      respond(async () => {
        const page = await admin.list(tenant(call.request.tenantId), { before: call.request.beforeVersion, limit: call.request.limit });
        return { sets: page.rows.map(setInfo), hasMore: page.hasMore };
      }, cb),
    getPolicySet: (call, cb) => respond(async () => setInfo(await admin.get(tenant(call.request.tenantId), call.request.version)), cb),
    uploadPolicySet: (call, cb) =>
      respond(async () => setInfo(await admin.upload(tenant(call.request.tenantId), call.request.policies, call.request.createdBy)), cb),
    validatePolicySet: (call, cb) =>
      respond(async () => {
        const r = admin.validate(call.request.policies);
        return { valid: r.valid, issues: r.issues.map((i) => ({ policyId: i.policyId, message: i.message })), policyIds: Object.keys(r.policies) };
      }, cb),
    dryRun: (call, cb) =>
      respond(async () => {
        const q = call.request;
        const r = await admin.dryRun({
          tenantId: tenant(q.tenantId),
          version: q.version,
          userId: q.userId,
          roles: q.roles,
          action: q.action,
          resourceType: q.resourceType,
          resourceId: q.resourceId,
          elevated: q.elevated,
        });
        return { permit: r.permit, code: r.code, policyIds: [...r.policyIds], version: r.version, errors: [...r.errors] };
      }, cb),
    activatePolicySet: (call, cb) => respond(async () => setInfo(await admin.activate(tenant(call.request.tenantId), call.request.version)), cb),
    queryDecisions: (call, cb) =>
      respond(async () => {
        const q = call.request;
        const rows = await admin.queryDecisions(tenant(q.tenantId), {
          runId: q.runId || undefined,
          mcpSessionId: q.mcpSessionId || undefined,
          afterId: q.afterId,
          limit: Math.min(Math.max(q.limit || 100, 1), 1000),
        });
        return { decisions: rows.map(decisionRecord) };
      }, cb),
    createElevation: (call, cb) =>
      respond(async () => {
        const q = call.request;
        return elevation(
          await admin.createElevation({ tenantId: tenant(q.tenantId), userId: q.userId, actions: q.actions, ttlSeconds: q.ttlSeconds, grantedBy: q.grantedBy }),
        );
      }, cb),
    revokeElevation: (call, cb) => respond(async () => elevation(await admin.revokeElevation(tenant(call.request.tenantId), call.request.id)), cb),
  };
}

import { isMcpPolicyPoint, isPolicyPoint } from "@steward/contract";
import {
  decisionOf,
  entitiesFor,
  resourceUid,
  type ActiveSets,
  type CedarEngine,
  type DecisionLog,
  type PolicySetRow,
  type PolicySetStore,
} from "@steward/pdp";
import type { Elevations } from "./elevations";

/** A request the admin API refuses: the message is for the administrator (their own policy text). */
export class AdminInputError extends Error {
  constructor(
    message: string,
    readonly issues: ReadonlyArray<{ policyId: string; message: string }> = [],
  ) {
    super(message);
    this.name = "AdminInputError";
  }
}

export class AdminNotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AdminNotFoundError";
  }
}

/**
 * The most sets one page of the list holds: a set is at most 200,000 characters (the gateway's bound), so a page
 * of the largest stays well inside one gRPC message (4 MiB) and one answer.
 */
export const POLICY_LIST_PAGE = 10;

/** Administration of policy sets, elevations and the decision log; every write is validated first. */
export function createPolicyAdmin(deps: {
  store: PolicySetStore;
  engine: CedarEngine;
  sets: ActiveSets;
  log: DecisionLog;
  elevations: Elevations;
  announce: (tenantId: string, version: number) => Promise<void>;
}) {
  const found = (row: PolicySetRow | null, what: string): PolicySetRow => {
    if (!row) throw new AdminNotFoundError(`${what} not found`);
    return row;
  };

  return {
    validate: (text: string) => deps.engine.validate(text),
    /** A page of the tenant's sets, newest first (at most POLICY_LIST_PAGE: a page of the largest sets fits one gRPC message). */
    list: (tenantId: string, page: { before: number; limit: number }) =>
      deps.store.list(tenantId, { before: Math.max(0, page.before), limit: Math.min(POLICY_LIST_PAGE, Math.max(1, page.limit || POLICY_LIST_PAGE)) }),
    get: async (tenantId: string, version: number) => found(await deps.store.get(tenantId, version), `version ${version}`),
    async upload(tenantId: string, text: string, createdBy: string): Promise<PolicySetRow> {
      const report = deps.engine.validate(text);
      if (!report.valid) throw new AdminInputError("the policy set does not validate against the schema", report.issues);
      return deps.store.addDraft(tenantId, text, Object.keys(report.policies), createdBy);
    },
    async activate(tenantId: string, version: number): Promise<PolicySetRow> {
      const row = found(await deps.store.get(tenantId, version), `version ${version}`);
      if (!deps.engine.validate(row.policies).valid) throw new AdminInputError(`version ${version} does not validate`);
      const active = found(await deps.store.activate(tenantId, version), `version ${version}`);
      deps.sets.invalidate(tenantId);
      await deps.announce(tenantId, version);
      return active;
    },
    async dryRun(q: {
      tenantId: string;
      version: number;
      userId: string;
      roles: string[];
      action: string;
      resourceType: string;
      resourceId: string;
      elevated: boolean;
    }) {
      if (!isPolicyPoint(q.action)) throw new AdminInputError(`unknown policy point ${q.action}`);
      const set = q.version > 0 ? await deps.sets.version(q.tenantId, q.version) : await deps.sets.get(q.tenantId);
      if (!set) throw new AdminNotFoundError(`version ${q.version} not found`);
      const mcp = isMcpPolicyPoint(q.action);
      const resource = mcp ? { type: "tool", id: q.action } : { type: q.resourceType, id: q.resourceId };
      const verdict = deps.engine.authorize(set, {
        principal: { type: "Steward::User", id: q.userId },
        action: mcp ? "mcp.tool.invoke" : q.action,
        resource: resourceUid(resource.type, resource.id),
        context: { elevated: q.elevated, run_id: "", step_no: 0 },
        entities: entitiesFor({ tenantId: q.tenantId, userId: q.userId, roles: q.roles, resource }),
      });
      // The same rule as a live decision: an evaluation error denies (the errors are shown to the administrator).
      const decision = decisionOf({ action: q.action, elevation: { kind: "none" }, verdict });
      return { permit: decision.permit, code: decision.code, policyIds: decision.policyIds, errors: verdict.errors, version: set.version };
    },
    queryDecisions: (tenantId: string, filter: { runId?: string; mcpSessionId?: string; afterId?: number; limit: number }) => deps.log.query(tenantId, filter),
    async createElevation(e: { tenantId: string; userId: string; actions: string[]; ttlSeconds: number; grantedBy: string }) {
      const unknown = e.actions.filter((a) => !isPolicyPoint(a));
      if (e.actions.length === 0 || unknown.length > 0)
        throw new AdminInputError(`actions must be policy points (unknown: ${unknown.join(", ") || "none given"})`);
      if (!(e.ttlSeconds >= 1 && e.ttlSeconds <= 86_400)) throw new AdminInputError("ttl_seconds must be 1 to 86400");
      return deps.elevations.create(e);
    },
    async revokeElevation(tenantId: string, id: string) {
      const row = await deps.elevations.revoke(tenantId, id);
      if (!row) throw new AdminNotFoundError("elevation session not found");
      return row;
    },
  };
}

export type PolicyAdmin = ReturnType<typeof createPolicyAdmin>;

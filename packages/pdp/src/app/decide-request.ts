import { isMcpPolicyPoint } from "@steward/contract";
import type { Logger } from "@steward/platform";
import { decisionOf, unknownActionDecision, type Decision, type ElevationState } from "../domain/decide";
import { entitiesFor, resourceUid } from "../domain/entities";
import type { CedarEngine } from "../adapters/cedar/engine";
import type { PolicyFacts } from "../adapters/pg/facts";
import { StaleRolesError, type DecisionEntry, type DecisionLog } from "../adapters/pg/decision-log";
import type { KnownRoles } from "./known-roles";
import type { ActiveSets } from "./active-sets";

export interface DecisionQuery {
  readonly tenantId: string;
  readonly userId: string;
  /**
   * Roles from a credential the caller verified (a route), or null (a tool call). Either way the decision uses
   * the principal's membership now; token roles only seed the membership of a user never seen in the tenant.
   */
  readonly tokenRoles: readonly string[] | null;
  readonly action: string;
  readonly resource: { type: string; id: string };
  readonly context: Readonly<Record<string, string>>;
}

/** A decision made (and its `decision` line logged), with the record it owes the decision log. */
export interface Evaluation {
  readonly decision: Decision;
  readonly policyVersion: number | null;
  readonly entry: DecisionEntry;
}

export type DecisionAnswer = Decision & { policyVersion: number | null };

/** Decides, writes the record to the log (committed), then answers. */
export type DecisionHandler = (query: DecisionQuery) => Promise<DecisionAnswer>;

/** The decision handler, and the same decision without its record written. */
export interface DecisionPoint extends DecisionHandler {
  /**
   * Decides without writing the record: the caller writes `entry` in the statement of the work the decision
   * permits, or alone (`log.record`) before it answers otherwise. Nothing may act on it before then.
   */
  evaluate(query: DecisionQuery, options?: EvaluateOptions): Promise<Evaluation>;
}

export interface EvaluateOptions {
  /**
   * Reads the member's roles now instead of using remembered ones: after a record was refused (StaleRolesError),
   * or where the caller cannot carry remembered roles to the record's statement.
   */
  readonly fresh?: boolean;
}

/**
 * One decision with the facts of this moment: the membership's roles (never a token's claim, which could
 * outlive a revocation), remembered from an earlier read but verified by the record's own statement, so a
 * recorded decision used the roles the member held when it was recorded; the elevation session's state right
 * now; the tenant's active policy set. The decision is written to the log before it is answered.
 */
export function createDecisionHandler(deps: {
  facts: Pick<PolicyFacts, "elevation">;
  roles: KnownRoles;
  sets: ActiveSets;
  engine: CedarEngine;
  log: DecisionLog;
  logger: Logger;
}): DecisionPoint {
  async function elevationOf(query: DecisionQuery): Promise<ElevationState> {
    const id = query.context.elevation_session_id;
    if (!id) return { kind: "none" };
    const session = await deps.facts.elevation(id);
    if (!session || session.tenant_id !== query.tenantId) return { kind: "invalid", reason: "unknown" };
    if (session.user_id !== query.userId) return { kind: "invalid", reason: "not_yours" };
    if (session.revoked) return { kind: "invalid", reason: "revoked" };
    if (session.expired) return { kind: "invalid", reason: "expired" };
    return { kind: "valid", grantsAction: session.actions.includes(query.action) };
  }

  async function evaluate(query: DecisionQuery, options: EvaluateOptions = {}): Promise<Evaluation> {
    const started = performance.now();
    let decision: Decision;
    let policyVersion: number | null = null;
    let rememberedRoles: string[] | undefined;
    const refused = unknownActionDecision(query.action);
    if (refused) {
      decision = refused;
    } else {
      const [member, elevation, set] = await Promise.all([
        deps.roles.get(query.tenantId, query.userId, query.tokenRoles, { fresh: options.fresh }),
        elevationOf(query),
        deps.sets.get(query.tenantId),
      ]);
      policyVersion = set.version;
      if (member.remembered) rememberedRoles = member.roles;
      const stepNo = Number(query.context.step_no ?? 0);
      // An MCP tool's point is one Cedar action on the tool named by the point.
      const mcp = isMcpPolicyPoint(query.action);
      const resource = mcp ? { type: "tool", id: query.action } : query.resource;
      const verdict = deps.engine.authorize(set, {
        principal: { type: "Steward::User", id: query.userId },
        action: mcp ? "mcp.tool.invoke" : query.action,
        resource: resourceUid(resource.type, resource.id),
        context: {
          elevated: elevation.kind === "valid" && elevation.grantsAction,
          run_id: query.context.run_id ?? "",
          step_no: Number.isFinite(stepNo) ? stepNo : 0,
          ...optionalContextOf(query.context),
        },
        entities: entitiesFor({ ...query, resource, roles: member.roles, toolSafety: query.context.tool_safety }),
      });
      decision = decisionOf({ action: query.action, elevation, verdict });
      if (verdict.erroredPolicyIds.length > 0) {
        // For the operator: which policy failed and how (the decision itself names the policies only).
        deps.logger.warn({ tenant_id: query.tenantId, policy_version: set.version, errors: verdict.errors }, "policy evaluation error: denied");
      }
    }
    const latencyMs = Number((performance.now() - started).toFixed(3));
    const entry: DecisionEntry = {
      tenantId: query.tenantId,
      userId: query.userId,
      action: query.action,
      resourceType: query.resource.type,
      resourceId: query.resource.id,
      runId: query.context.run_id ?? null,
      stepNo: query.context.step_no ? Number(query.context.step_no) : null,
      fingerprint: query.context.fingerprint ?? null,
      elevationSessionId: query.context.elevation_session_id ?? null,
      mcpSessionId: query.context.mcp_session ?? null,
      mcpMode: query.context.mcp_mode ?? null,
      permit: decision.permit,
      code: decision.code,
      policyIds: decision.policyIds,
      policyVersion,
      latencyMs,
      ...(rememberedRoles ? { rememberedRoles } : {}),
    };
    // Every decision is in the decision log with its policies (the record); the line is for the operator: a refusal
    // at info, a permit (one per route call and per tool call, most of them) at debug (docs/policy.md).
    deps.logger[decision.permit ? "debug" : "info"](
      {
        tenant_id: query.tenantId,
        action: query.action,
        run_id: query.context.run_id,
        mcp_session: query.context.mcp_session,
        step_no: query.context.step_no,
        permit: decision.permit,
        code: decision.code,
        policy_ids: decision.policyIds,
        policy_version: policyVersion,
        latency_ms: latencyMs,
      },
      "decision",
    );
    return { decision, policyVersion, entry };
  }

  async function handle(query: DecisionQuery): Promise<DecisionAnswer> {
    const first = await evaluate(query);
    try {
      await deps.log.record(first.entry);
      return { ...first.decision, policyVersion: first.policyVersion };
    } catch (err) {
      if (!(err instanceof StaleRolesError)) throw err;
    }
    // The remembered roles changed before the record was written: nothing was recorded, so nothing acts on the
    // first decision; the answer is the decision on the roles read now.
    const again = await evaluate(query, { fresh: true });
    await deps.log.record(again.entry);
    return { ...again.decision, policyVersion: again.policyVersion };
  }
  return Object.assign(handle, { evaluate });
}

/** DecisionContext's optional attributes, set only when the caller named them, so that a policy can test them. */
const OPTIONAL_CONTEXT = [
  // The MCP session a decision is made for (the gateway's /mcp, docs/mcp.md) and its mode.
  "mcp_session",
  "mcp_mode",
  // The channel a confirmation is decided through (docs/security.md).
  "approval_channel",
] as const;

function optionalContextOf(context: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of OPTIONAL_CONTEXT) if (context[name]) out[name] = context[name];
  return out;
}

import { NoActiveSetError, type DecisionHandler, type DecisionQuery } from "@steward/pdp";
import type { PolicyDecisionApi } from "@steward/proto";

/** A decision as the gateway acts on it: permit, or the deny's code. */
export interface GatewayDecision {
  readonly permit: boolean;
  readonly code: string;
}

/** Decides one of the gateway's own policy points (a route, an MCP call); rejects when it cannot be decided. */
export type GatewayDecide = (query: DecisionQuery, options?: { traceparent?: string }) => Promise<GatewayDecision>;

/** How long the policy service is waited for when it must be asked (its channel included). */
const REMOTE_DEADLINE_MS = 2000;

/**
 * The gateway's decisions, made in process by the same PDP as the policy service's (`@steward/pdp`): the
 * tenant's active set (activations heard on NATS), the membership of this moment, and the record written to the
 * decision log, group-committed, before the answer. A route guards the gateway's own work, not a tool's side
 * effect, so it needs no hop to another process. A tenant that has no policy set yet is asked of the policy
 * service, which installs the default set (the gateway may not write policy sets) and records that decision.
 */
export function createGatewayDecisions(deps: { decide: DecisionHandler; policyService: PolicyDecisionApi }): GatewayDecide {
  return async (query, options = {}) => {
    try {
      const d = await deps.decide(query);
      return { permit: d.permit, code: d.code };
    } catch (err) {
      if (!(err instanceof NoActiveSetError)) throw err;
    }
    const d = await deps.policyService.decide(
      {
        principal: { tenantId: query.tenantId, userId: query.userId, roles: [...(query.tokenRoles ?? [])], rolesFromToken: query.tokenRoles !== null },
        action: query.action,
        resource: query.resource,
        context: { ...query.context },
      },
      { deadlineMs: REMOTE_DEADLINE_MS, traceparent: options.traceparent, waitForReady: true },
    );
    return { permit: d.permit, code: d.code };
  };
}

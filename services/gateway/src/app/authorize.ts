import type { PolicyPoint } from "@steward/contract";
import { ForbiddenError, UnavailableError, type Logger } from "@steward/platform";
import type { PolicyDecisionApi } from "@steward/proto";
import type { Principal } from "../adapters/http/auth";

export type Authorize = (principal: Principal, point: PolicyPoint, resource: { type: string; id: string }, traceparent?: string) => Promise<void>;

/**
 * Asks the PDP for a route's policy point. The token's roles go along only to seed the membership of a user
 * the PDP has never seen; it decides with the membership as it stands. A deny is 403; an unreachable PDP is still
 * no permit (fail closed) but answers 503 with Retry-After, since it says nothing about the caller's rights.
 * The call waits for the channel within its deadline, which rides out a PDP restarting.
 */
export function createAuthorizer(deps: { pdp: PolicyDecisionApi; logger: Logger }): Authorize {
  return async (principal, point, resource, traceparent) => {
    let permit = false;
    try {
      const d = await deps.pdp.decide(
        {
          principal: { tenantId: principal.tenantId, userId: principal.userId, roles: [...principal.roles], rolesFromToken: true },
          action: point,
          resource,
          context: {},
        },
        { deadlineMs: 2000, traceparent, waitForReady: true },
      );
      permit = d.permit;
    } catch (err) {
      deps.logger.warn({ grpc_code: (err as { code?: number }).code, action: point }, "PDP unreachable; denying the route");
      throw new UnavailableError("the policy decision point is unavailable; try again", { cause: err });
    }
    if (!permit) throw new ForbiddenError();
  };
}

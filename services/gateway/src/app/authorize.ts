import type { PolicyPoint } from "@steward/contract";
import { ForbiddenError, type Logger } from "@steward/platform";
import type { PolicyDecisionApi } from "@steward/proto";
import type { Principal } from "../adapters/http/auth";

export type Authorize = (principal: Principal, point: PolicyPoint, resource: { type: string; id: string }, traceparent?: string) => Promise<void>;

/** Asks the PDP for a route's policy point with the token's roles; a deny or an unreachable PDP is 403. */
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
        { deadlineMs: 2000, traceparent },
      );
      permit = d.permit;
    } catch (err) {
      deps.logger.warn({ grpc_code: (err as { code?: number }).code, action: point }, "PDP unreachable; denying the route");
      throw new ForbiddenError("the policy decision point is unavailable", { cause: err });
    }
    if (!permit) throw new ForbiddenError();
  };
}

import type { PolicyPoint } from "@steward/contract";
import { ForbiddenError, UnavailableError, type Logger } from "@steward/platform";
import type { Principal } from "../domain/principal";
import type { GatewayDecide, PendingPermit } from "./gateway-decisions";

/** Resolves on a permit (with its record still to write when asked to defer it), rejects otherwise. */
export type Authorize = (
  principal: Principal,
  point: PolicyPoint,
  resource: { type: string; id: string },
  traceparent?: string,
  options?: { deferRecord?: boolean; context?: Readonly<Record<string, string>> },
) => Promise<PendingPermit | undefined>;

/**
 * Decides a route's policy point. The token's roles go along only to seed the membership of a user never seen
 * in the tenant; the decision uses the membership as it stands. A deny is 403; a decision that cannot be made
 * (PostgreSQL away, so neither the facts nor the record) is still no permit (fail closed) but answers 503 with
 * Retry-After, since it says nothing about the caller's rights.
 */
export function createAuthorizer(deps: { decide: GatewayDecide; logger: Logger }): Authorize {
  return async (principal, point, resource, traceparent, options = {}) => {
    let permit = false;
    let pending: PendingPermit | undefined;
    try {
      const d = await deps.decide(
        { tenantId: principal.tenantId, userId: principal.userId, tokenRoles: [...principal.roles], action: point, resource, context: { ...options.context } },
        { traceparent, deferRecord: options.deferRecord },
      );
      permit = d.permit;
      pending = d.pending;
    } catch (err) {
      deps.logger.warn(
        { error_class: (err as Error)?.name, code: (err as { code?: number | string }).code, action: point },
        "route could not be decided; denying",
      );
      throw new UnavailableError("the policy decision point is unavailable; try again", { cause: err });
    }
    if (!permit) throw new ForbiddenError();
    return pending;
  };
}

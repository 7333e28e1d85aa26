import type { Logger } from "@steward/platform";
import { decide, type Decision } from "../domain/decide";
import type { PolicyFacts } from "../adapters/pg/facts";

export interface DecisionQuery {
  readonly tenantId: string;
  readonly userId: string;
  /** Roles from a credential the caller verified, or null to use the principal's current membership. */
  readonly tokenRoles: readonly string[] | null;
  readonly action: string;
  readonly resource: { type: string; id: string };
  readonly context: Readonly<Record<string, string>>;
}

/** Reads the facts of this moment, decides, and logs the decision with the rules that made it. */
export function createDecisionHandler(deps: { facts: PolicyFacts; logger: Logger }) {
  return async function handle(query: DecisionQuery): Promise<Decision> {
    const started = performance.now();
    const roles = query.tokenRoles ?? (await deps.facts.currentRoles(query.tenantId, query.userId));
    const rules = roles.length === 0 ? [] : await deps.facts.rulesFor(query.tenantId, roles, query.action);
    const decision = decide({ roles, action: query.action, rules });
    deps.logger.info(
      {
        tenant_id: query.tenantId,
        user_id: query.userId,
        action: query.action,
        resource: query.resource,
        run_id: query.context.run_id,
        step_no: query.context.step_no,
        fingerprint: query.context.fingerprint,
        permit: decision.permit,
        code: decision.code,
        policy_ids: decision.policyIds,
        latency_ms: Number((performance.now() - started).toFixed(3)),
      },
      "decision",
    );
    return decision;
  };
}

export type DecisionHandler = ReturnType<typeof createDecisionHandler>;

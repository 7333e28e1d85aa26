import { RunErrorCode, isPolicyPoint } from "@steward/contract";

/** A rule: members of `role` in `tenant` ('*' for all tenants) may take `action` ('*' for all actions). */
export interface RoleRule {
  readonly tenant: string;
  readonly role: string;
  readonly action: string;
}

export interface Decision {
  readonly permit: boolean;
  readonly code: string;
  readonly reasons: readonly string[];
  readonly policyIds: readonly string[];
}

export function ruleId(rule: RoleRule): string {
  return `role_actions/${rule.tenant}/${rule.role}/${rule.action}`;
}

/**
 * Pure decision: permit when some rule grants the action to one of the principal's current roles.
 * Anything unmatched is a deny with 60500, and an action outside the catalogue is never permitted.
 */
export function decide(input: { roles: readonly string[]; action: string; rules: readonly RoleRule[] }): Decision {
  const denied = (reason: string): Decision => ({
    permit: false,
    code: String(RunErrorCode.policyDenied),
    reasons: [reason],
    policyIds: [],
  });
  if (!isPolicyPoint(input.action)) return denied(`unknown policy point ${input.action}`);
  if (input.roles.length === 0) return denied("the principal holds no role");
  const matching = input.rules.filter(
    (r) => input.roles.includes(r.role) && (r.action === input.action || r.action === "*"),
  );
  if (matching.length === 0) return denied(`no rule permits ${input.action} for the principal's roles`);
  return {
    permit: true,
    code: "",
    reasons: [`permitted to role ${matching[0].role}`],
    policyIds: matching.map(ruleId),
  };
}

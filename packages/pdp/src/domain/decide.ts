import { RunErrorCode, isPolicyPoint } from "@steward/contract";

export interface Decision {
  readonly permit: boolean;
  readonly code: string;
  readonly reasons: readonly string[];
  readonly policyIds: readonly string[];
}

/** An elevation session as the decision sees it: none referenced, valid for this action, or not usable. */
export type ElevationState =
  | { readonly kind: "none" }
  | { readonly kind: "valid"; readonly grantsAction: boolean }
  | { readonly kind: "invalid"; readonly reason: "expired" | "revoked" | "unknown" | "not_yours" };

export interface CedarVerdict {
  readonly permit: boolean;
  readonly policyIds: readonly string[];
  readonly errors: readonly string[];
  /** Policies whose evaluation errored; Cedar leaves them out of its answer. */
  readonly erroredPolicyIds: readonly string[];
}

/**
 * Turns Cedar's answer into Steward's decision. A deny is 60500, except when the principal leaned on an
 * elevation session that is no longer usable: then 60501, so the run and the audit say why.
 * Any policy that errored makes the decision a deny, 60503, whatever Cedar answered: Cedar skips an erroring
 * policy, so an erroring `forbid` would let a `permit` win, and an erroring `permit` means the set is not doing
 * what its author meant. The reason names the policies only; their messages stay in the PDP's own log.
 */
export function decisionOf(input: { action: string; elevation: ElevationState; verdict: CedarVerdict }): Decision {
  const { verdict, elevation } = input;
  if (verdict.erroredPolicyIds.length > 0) {
    return {
      permit: false,
      code: String(RunErrorCode.policyEvaluationError),
      reasons: [`policy evaluation error in ${verdict.erroredPolicyIds.join(", ")}`],
      policyIds: verdict.erroredPolicyIds,
    };
  }
  if (verdict.permit) {
    return { permit: true, code: "", reasons: [`permitted by ${verdict.policyIds.join(", ")}`], policyIds: verdict.policyIds };
  }
  if (elevation.kind === "invalid") {
    return {
      permit: false,
      code: String(RunErrorCode.elevationInvalid),
      reasons: [`elevation session ${elevation.reason}`],
      policyIds: verdict.policyIds,
    };
  }
  const reason = verdict.policyIds.length > 0 ? `forbidden by ${verdict.policyIds.join(", ")}` : `no policy permits ${input.action}`;
  return { permit: false, code: String(RunErrorCode.policyDenied), reasons: [reason, ...verdict.errors.slice(0, 3)], policyIds: verdict.policyIds };
}

/** An action outside the catalogue is never evaluated, let alone permitted. */
export function unknownActionDecision(action: string): Decision | null {
  if (isPolicyPoint(action)) return null;
  return { permit: false, code: String(RunErrorCode.policyDenied), reasons: [`unknown policy point ${action}`], policyIds: [] };
}

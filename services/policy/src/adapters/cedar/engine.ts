import { setFlagsFromString } from "node:v8";
import * as cedar from "@cedar-policy/cedar-wasm/nodejs";

export interface ValidationIssue {
  readonly policyId: string;
  readonly message: string;
}

export interface ValidatedPolicySet {
  readonly valid: boolean;
  readonly issues: readonly ValidationIssue[];
  /** Each policy's text by its @id, in the order written. */
  readonly policies: Readonly<Record<string, string>>;
}

export interface CedarRequest {
  readonly principal: { type: string; id: string };
  readonly action: string;
  readonly resource: { type: string; id: string };
  readonly context: Record<string, boolean | number | string>;
  readonly entities: cedar.Entities;
}

export interface CedarAnswer {
  readonly permit: boolean;
  /** The @ids of the policies that determined the answer (permits for allow, forbids for an explicit deny). */
  readonly policyIds: readonly string[];
  readonly errors: readonly string[];
}

export interface CedarEngine {
  /** Parses, checks that every policy has a unique @id, and validates against the schema (strict). */
  validate(text: string): ValidatedPolicySet;
  /** Pre-parses a validated set under `key` (e.g. tenant and version) for fast repeated decisions. */
  prepare(key: string, set: ValidatedPolicySet): void;
  isPrepared(key: string): boolean;
  authorize(key: string, request: CedarRequest): CedarAnswer;
}

/**
 * Keeps TurboFan from inlining JS→Wasm calls. Node 20's V8 (11.3) inlines the call to a cedar-wasm export into
 * the optimized JavaScript that calls it, but cannot lazily deoptimize that JavaScript while the call is on the
 * stack: every cedar-wasm export returns an externref, a return kind its deoptimizer does not handle, and the
 * process dies with "unreachable code" in Deoptimizer::DoComputeBuiltinContinuation (SIGTRAP). Such a deopt
 * follows whenever something the caller was compiled against changes inside the call — a pretenuring decision
 * at a GC, a map that JSON.parse extends (the glue stringifies the request and parses the answer there) — and
 * with in-flight objects surviving GCs that comes within a few thousand decisions. Without inlining, the call
 * goes through V8's JS-to-Wasm wrapper and deoptimizes like any call. NODE_OPTIONS refuses this flag; see
 * docs/pdp-stability.md.
 */
const WASM_SAFE_V8_FLAG = "--no-turbo-inline-js-wasm-calls";

const ID_ANNOTATION = /@id\(\s*"([^"]*)"\s*\)/;
const POLICY_ID = /^[A-Za-z0-9._:-]{1,64}$/;
export const NAMESPACE = "Steward";

/**
 * The only place Cedar is called. Schema errors stop the policy service at boot. Sets `WASM_SAFE_V8_FLAG` for the
 * whole process before the first Cedar call, so no optimized code can ever hold an inlined call into Cedar.
 */
export function createCedarEngine(schemaText: string): CedarEngine {
  setFlagsFromString(WASM_SAFE_V8_FLAG);
  const schemaCheck = cedar.checkParseSchema(schemaText);
  if (schemaCheck.type === "failure") throw new Error(`the Cedar schema does not parse: ${schemaCheck.errors.map((e) => e.message).join("; ")}`);
  const schemaName = "steward";
  const loaded = cedar.preparseSchema(schemaName, schemaText);
  if (loaded.type === "failure") throw new Error("the Cedar schema could not be loaded");
  const prepared = new Set<string>();

  function validate(text: string): ValidatedPolicySet {
    const parts = cedar.policySetTextToParts(text);
    if (parts.type === "failure") {
      return { valid: false, issues: parts.errors.map((e) => ({ policyId: "", message: e.message })), policies: {} };
    }
    if (parts.policy_templates.length > 0) {
      return { valid: false, issues: [{ policyId: "", message: "policy templates are not supported" }], policies: {} };
    }
    const issues: ValidationIssue[] = [];
    const policies: Record<string, string> = {};
    parts.policies.forEach((policy, i) => {
      const id = ID_ANNOTATION.exec(policy)?.[1];
      if (!id) issues.push({ policyId: `#${i + 1}`, message: 'every policy needs an @id("...") annotation' });
      else if (!POLICY_ID.test(id)) issues.push({ policyId: id, message: "an @id is 1-64 letters, digits, '.', '_', ':' or '-'" });
      else if (policies[id]) issues.push({ policyId: id, message: "this @id is used twice" });
      else policies[id] = policy;
    });
    if (parts.policies.length === 0) issues.push({ policyId: "", message: "the policy set is empty" });
    if (issues.length > 0) return { valid: false, issues, policies };
    const answer = cedar.validate({ schema: schemaText, policies: { staticPolicies: policies }, validationSettings: { mode: "strict" } });
    if (answer.type === "failure") return { valid: false, issues: answer.errors.map((e) => ({ policyId: "", message: e.message })), policies };
    const found = answer.validationErrors.map((e) => ({ policyId: e.policyId, message: e.error.message }));
    return { valid: found.length === 0, issues: found, policies };
  }

  return {
    validate,
    prepare(key, set) {
      const r = cedar.preparsePolicySet(key, { staticPolicies: { ...set.policies } });
      if (r.type === "failure") throw new Error(`policy set ${key} could not be prepared`);
      prepared.add(key);
    },
    isPrepared: (key) => prepared.has(key),
    authorize(key, request) {
      const answer = cedar.statefulIsAuthorized({
        principal: request.principal,
        action: { type: `${NAMESPACE}::Action`, id: request.action },
        resource: request.resource,
        context: request.context,
        entities: request.entities,
        preparsedSchemaName: schemaName,
        preparsedPolicySetId: key,
        validateRequest: true,
      });
      if (answer.type === "failure") return { permit: false, policyIds: [], errors: answer.errors.map((e) => e.message) };
      return {
        permit: answer.response.decision === "allow",
        policyIds: answer.response.diagnostics.reason,
        errors: answer.response.diagnostics.errors.map((e) => `${e.policyId}: ${e.error.message}`),
      };
    },
  };
}

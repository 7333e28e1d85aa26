import { setFlagsFromString } from "node:v8";
import * as cedar from "@cedar-policy/cedar-wasm/nodejs";
import { createLru } from "../../domain/lru";
import { contextAsRead, contextReads, type ContextReads } from "../../domain/context-reads";
import { policyBoundsIssue } from "../../domain/policy-bounds";

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

/** A validated set ready for decisions. `key` names one content (e.g. tenant and version) for the engine's life. */
export interface PreparedPolicySet {
  readonly key: string;
  readonly policies: Readonly<Record<string, string>>;
  /** The context attributes the set's policies can read (`contextReads`): a remembered answer is keyed by these. */
  readonly contextReads: ContextReads;
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
  /** The @ids of the policies whose evaluation errored (e.g. integer overflow); Cedar skips them. */
  readonly erroredPolicyIds: readonly string[];
}

export interface CedarEngineOptions {
  /** How many pre-parsed sets Cedar holds at once (default 1000); the least recently used is parsed again when next needed. */
  readonly preparedSets?: number;
  /**
   * How many answers are remembered by their request (default 4096; 0: none). The same request to the same set
   * is answered again without Cedar: an answer depends on nothing else. Context attributes no policy of the set
   * reads (a tool call's run and step, mostly) count by their type only.
   */
  readonly rememberedAnswers?: number;
}

export interface CedarEngine {
  /** Parses, checks that every policy has a unique @id, and validates against the schema (strict). */
  validate(text: string): ValidatedPolicySet;
  /** Pre-parses a validated set under `key` (e.g. tenant and version) for fast repeated decisions. */
  prepare(key: string, set: ValidatedPolicySet): PreparedPolicySet;
  authorize(set: PreparedPolicySet, request: CedarRequest): CedarAnswer;
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
let engines = 0;

/**
 * The only place Cedar is called. Schema errors stop the policy service at boot. Sets `WASM_SAFE_V8_FLAG` for the
 * whole process before the first Cedar call, so no optimized code can ever hold an inlined call into Cedar.
 *
 * cedar-wasm keeps pre-parsed sets in its own memory by id and has no call to drop one, so the engine parses into
 * a bounded number of slots (`preparedSets`), reusing the least recently used slot: Cedar's memory stays bounded.
 * A slot is chosen and filled in the same synchronous call that decides, so no other decision can refill it in
 * between and no decision ever runs against another set's policies.
 */
export function createCedarEngine(schemaText: string, options: CedarEngineOptions = {}): CedarEngine {
  setFlagsFromString(WASM_SAFE_V8_FLAG);
  const schemaCheck = cedar.checkParseSchema(schemaText);
  if (schemaCheck.type === "failure") throw new Error(`the Cedar schema does not parse: ${schemaCheck.errors.map((e) => e.message).join("; ")}`);
  const schemaName = "steward";
  const loaded = cedar.preparseSchema(schemaName, schemaText);
  if (loaded.type === "failure") throw new Error("the Cedar schema could not be loaded");
  const engineId = `steward-engine-${++engines}`;
  const slots = createLru<string, string>(options.preparedSets ?? 1000);
  const rememberedAnswers = options.rememberedAnswers ?? 4096;
  const answers = rememberedAnswers > 0 ? createLru<string, CedarAnswer>(rememberedAnswers) : null;
  const freeSlots: string[] = [];
  let slotsMade = 0;

  /** Parses `set` into a slot of its own (its old one if it has one) and returns the slot's id. */
  function parseIntoSlot(set: PreparedPolicySet): string {
    let slot = slots.get(set.key);
    if (slot === undefined) {
      if (slots.size >= slots.capacity) freeSlots.push((slots.shift() as { value: string }).value);
      slot = freeSlots.pop() ?? `${engineId}/${slotsMade++}`;
    }
    const r = cedar.preparsePolicySet(slot, { staticPolicies: { ...set.policies } });
    if (r.type === "failure") {
      slots.delete(set.key);
      freeSlots.push(slot);
      throw new Error(`policy set ${set.key} could not be prepared`);
    }
    slots.set(set.key, slot);
    return slot;
  }

  function validate(text: string): ValidatedPolicySet {
    // Refused before Cedar parses it: a deep enough policy would overflow the stack inside the module and break it.
    const tooDeep = policyBoundsIssue(text);
    if (tooDeep) return { valid: false, issues: [{ policyId: "", message: tooDeep }], policies: {} };
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

  /** One decision by Cedar, in the slot of the set (parsed again if its slot was reused). */
  function evaluate(set: PreparedPolicySet, request: CedarRequest): CedarAnswer {
    const slot = slots.get(set.key) ?? parseIntoSlot(set);
    const answer = cedar.statefulIsAuthorized({
      principal: request.principal,
      action: { type: `${NAMESPACE}::Action`, id: request.action },
      resource: request.resource,
      context: request.context,
      entities: request.entities,
      preparsedSchemaName: schemaName,
      preparsedPolicySetId: slot,
      validateRequest: true,
    });
    if (answer.type === "failure") return { permit: false, policyIds: [], errors: answer.errors.map((e) => e.message), erroredPolicyIds: [] };
    const { reason, errors } = answer.response.diagnostics;
    return {
      permit: answer.response.decision === "allow",
      policyIds: reason,
      errors: errors.map((e) => `${e.policyId}: ${e.error.message}`),
      erroredPolicyIds: [...new Set(errors.map((e) => e.policyId))],
    };
  }

  return {
    validate,
    prepare(key, set) {
      const handle = { key, policies: set.policies, contextReads: contextReads(Object.values(set.policies)) };
      parseIntoSlot(handle);
      return handle;
    },
    authorize(set, request) {
      // A set's key names one content for the engine's life, and Cedar reads nothing but the set and the request
      // (no clock, no I/O): the same pair has the same answer. A tool call names a new step each time, which the
      // default set never reads: the same member calling the same tool is the same question.
      const key = answers ? `${set.key}\u0000${JSON.stringify({ ...request, context: contextAsRead(request.context, set.contextReads) })}` : "";
      const known = answers?.get(key);
      if (known) return copyOf(known);
      const answer = evaluate(set, request);
      answers?.set(key, copyOf(answer));
      return answer;
    },
  };
}

/** An answer the caller may keep or change without touching the one remembered. */
function copyOf(answer: CedarAnswer): CedarAnswer {
  return { permit: answer.permit, policyIds: [...answer.policyIds], errors: [...answer.errors], erroredPolicyIds: [...answer.erroredPolicyIds] };
}

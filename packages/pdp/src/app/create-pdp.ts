import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Logger, Pool } from "@steward/platform";
import { createCedarEngine, type CedarEngine } from "../adapters/cedar/engine";
import { createPgPolicyFacts } from "../adapters/pg/facts";
import { createPgPolicySetStore, type PolicySetStore } from "../adapters/pg/policy-sets";
import { createPgDecisionLog, type DecisionLog } from "../adapters/pg/decision-log";
import { createActiveSets, type ActiveSets } from "./active-sets";
import { createDecisionHandler, type DecisionPoint } from "./decide-request";
import { createKnownRoles } from "./known-roles";

/** The policy folder that ships with Steward: the Cedar schema and the default set for new tenants. */
export const defaultPolicyDir = join(__dirname, "..", "..", "..", "..", "infra", "policies");

/** Members whose roles a PDP remembers between decisions; each record verifies them. */
const MEMBERS_REMEMBERED = 10_000;

export interface PdpOptions {
  /** How many tenants' parsed sets are held (default 1000); Cedar holds as many, and a dry run borrows a slot. */
  readonly cacheTenants?: number;
  /** Whether a tenant without any set gets the default one installed (default true; the gateway's guard: false). */
  readonly installsDefault?: boolean;
  /**
   * How many Cedar answers are remembered by request (default 4096; 0: none). Worth it where requests repeat (a
   * member's routes); a tool call names its run and step, so the policy service's requests never do.
   */
  readonly rememberedAnswers?: number;
}

export interface Pdp {
  readonly decide: DecisionPoint;
  readonly engine: CedarEngine;
  readonly store: PolicySetStore;
  readonly sets: ActiveSets;
  readonly log: DecisionLog;
}

/**
 * One policy decision point over PostgreSQL: the Cedar engine from the schema, the default set (which must
 * validate, or nothing starts), the tenants' active sets, the facts of the moment and the group-committed
 * decision log. The policy service serves it over gRPC; the gateway's route guard runs it in process, with the
 * same facts and the same records. Activations reach it through `sets.invalidate`.
 */
export function createPdp(deps: { pool: Pool; policyDir: string; logger: Logger }, options: PdpOptions = {}): Pdp {
  const cacheTenants = options.cacheTenants ?? 1000;
  const engine = createCedarEngine(readFileSync(join(deps.policyDir, "schema.cedarschema"), "utf8"), {
    preparedSets: cacheTenants,
    rememberedAnswers: options.rememberedAnswers,
  });
  const defaultText = readFileSync(join(deps.policyDir, "default.cedar"), "utf8");
  const defaultSet = engine.validate(defaultText);
  if (!defaultSet.valid) {
    throw new Error(`default.cedar does not validate: ${defaultSet.issues.map((i) => `${i.policyId} ${i.message}`).join("; ")}`);
  }
  const store = createPgPolicySetStore(deps.pool);
  const sets = createActiveSets({ store, engine, defaultSet, defaultText }, { maxTenants: cacheTenants, installsDefault: options.installsDefault });
  const log = createPgDecisionLog(deps.pool);
  const facts = createPgPolicyFacts(deps.pool);
  const roles = createKnownRoles(facts, MEMBERS_REMEMBERED);
  const decide = createDecisionHandler({ facts, roles, sets, engine, log, logger: deps.logger });
  return { decide, engine, store, sets, log };
}

import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { grpc, Logger, Metrics, Pool } from "@steward/platform";
import { createCedarEngine } from "../adapters/cedar/engine";
import { createPgPolicyFacts } from "../adapters/pg/facts";
import { createPgPolicySetStore } from "../adapters/pg/policy-sets";
import { createPgDecisionLog } from "../adapters/pg/decision-log";
import { createPgElevations } from "../adapters/pg/elevations";
import { createPolicyGrpcServer } from "../adapters/grpc/server";
import { withDecisionMetrics } from "../adapters/metrics/decision-metrics";
import { createActiveSets } from "./active-sets";
import { createPolicyAdmin } from "./admin";
import { createDecisionHandler } from "./decide-request";

/** The policy folder that ships with Steward: the Cedar schema and the default set for new tenants. */
export const defaultPolicyDir = join(__dirname, "..", "..", "..", "..", "infra", "policies");

/** How replicas tell each other that a tenant's active set changed (NATS in production). */
export interface Activations {
  announce(tenantId: string, version: number): Promise<void>;
  /** Calls `onActivated` for every announcement; returns the unsubscribe. */
  listen(onActivated: (tenantId: string) => void): () => void;
}

/**
 * Wires the policy service: Cedar engine from the schema, the default set (which must validate, or the
 * service does not start), the PDP, its administration, and the activation listener.
 */
export function composePolicyService(
  deps: { pool: Pool; activations: Activations; policyDir: string; logger: Logger; metrics?: Metrics },
  options: { cacheTenants?: number } = {},
): {
  server: grpc.Server;
  close(): void;
} {
  // Cedar holds as many parsed sets as tenants are cached; a dry run of another version borrows a slot.
  const cacheTenants = options.cacheTenants ?? 1000;
  const engine = createCedarEngine(readFileSync(join(deps.policyDir, "schema.cedarschema"), "utf8"), { preparedSets: cacheTenants });
  const defaultText = readFileSync(join(deps.policyDir, "default.cedar"), "utf8");
  const defaultSet = engine.validate(defaultText);
  if (!defaultSet.valid) {
    throw new Error(`default.cedar does not validate: ${defaultSet.issues.map((i) => `${i.policyId} ${i.message}`).join("; ")}`);
  }
  const store = createPgPolicySetStore(deps.pool);
  const sets = createActiveSets({ store, engine, defaultSet, defaultText }, { maxTenants: cacheTenants });
  const stopListening = deps.activations.listen((tenantId) => sets.invalidate(tenantId));
  const log = createPgDecisionLog(deps.pool);
  const decide = createDecisionHandler({ facts: createPgPolicyFacts(deps.pool), sets, engine, log, logger: deps.logger });
  const handle = deps.metrics ? withDecisionMetrics(decide, deps.metrics) : decide;
  const admin = createPolicyAdmin({
    store,
    engine,
    sets,
    log,
    elevations: createPgElevations(deps.pool),
    announce: (tenantId, version) => deps.activations.announce(tenantId, version),
  });
  return { server: createPolicyGrpcServer({ handle, admin, logger: deps.logger }), close: stopListening };
}

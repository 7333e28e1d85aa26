import type { grpc, Logger, Metrics, Pool } from "@steward/platform";
import { createPdp } from "@steward/pdp";
import { createPgElevations } from "./adapters/pg/elevations";
import { createPolicyGrpcServer } from "./adapters/grpc/server";
import { withDecisionMetrics } from "./adapters/metrics/decision-metrics";
import { createPolicyAdmin } from "./app/admin";

/** How replicas tell each other that a tenant's active set changed (NATS in production). */
export interface Activations {
  announce(tenantId: string, version: number): Promise<void>;
  /** Calls `onActivated` for every announcement; returns the unsubscribe. */
  listen(onActivated: (tenantId: string) => void): () => void;
}

/**
 * Wires the policy service: the PDP (`@steward/pdp`: engine, default set, active sets, facts, decision log),
 * its administration, and the activation listener, served over gRPC.
 */
export function composePolicyService(
  deps: { pool: Pool; activations: Activations; policyDir: string; logger: Logger; metrics?: Metrics },
  options: { cacheTenants?: number } = {},
): {
  server: grpc.Server;
  close(): void;
} {
  // Cedar's answers are remembered (the engine's default): a tool call's run and step, which no default policy
  // reads, count by their type only, so the same member calling the same tool asks Cedar once per set.
  const pdp = createPdp({ pool: deps.pool, policyDir: deps.policyDir, logger: deps.logger }, { cacheTenants: options.cacheTenants });
  const stopListening = deps.activations.listen((tenantId) => pdp.sets.invalidate(tenantId));
  const handle = deps.metrics ? withDecisionMetrics(pdp.decide, deps.metrics) : pdp.decide;
  const admin = createPolicyAdmin({
    store: pdp.store,
    engine: pdp.engine,
    sets: pdp.sets,
    log: pdp.log,
    elevations: createPgElevations(deps.pool),
    announce: (tenantId, version) => deps.activations.announce(tenantId, version),
  });
  return { server: createPolicyGrpcServer({ handle, admin, logger: deps.logger }), close: stopListening };
}

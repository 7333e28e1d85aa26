import { allowPeers, createGrpcServer, grpc, grpcError, type Logger, type PeerRules } from "@steward/platform";
import { PolicyAdminService, PolicyDecisionService, type PolicyDecisionServer } from "@steward/proto";
import type { DecisionHandler } from "@steward/pdp";
import type { PolicyAdmin } from "../../app/admin";
import { tracedDecision } from "../tracing/decision-span";
import { policyAdminService } from "./admin-service";

/** The PolicyDecision service. Malformed requests are INVALID_ARGUMENT; other failures UNKNOWN. */
function policyDecisionService(handle: DecisionHandler, logger: Logger): PolicyDecisionServer {
  return {
    decide(call, callback) {
      const req = call.request;
      if (!req.principal?.tenantId || !req.principal.userId || !req.action) {
        callback(grpcError(grpc.status.INVALID_ARGUMENT, "principal.tenant_id, principal.user_id and action are required"));
        return;
      }
      const traceparent = call.metadata.get("traceparent")[0];
      const query = {
        tenantId: req.principal.tenantId,
        userId: req.principal.userId,
        tokenRoles: req.principal.rolesFromToken ? req.principal.roles : null,
        action: req.action,
        resource: { type: req.resource?.type ?? "", id: req.resource?.id ?? "" },
        context: req.context,
      };
      tracedDecision(handle, query, typeof traceparent === "string" ? traceparent : undefined)
        .then((d) => callback(null, { permit: d.permit, code: d.code, reasons: [...d.reasons], policyIds: [...d.policyIds] }))
        .catch((err: unknown) => {
          logger.error({ err }, "decision failed");
          callback(grpcError(grpc.status.UNKNOWN, "decision failed"));
        });
    },
  };
}

/**
 * Who may call the policy service (SPEC §10): its administration only the gateway (whose admin routes check
 * the caller's own rights first); decisions the gateway (route points) and tool-exec (every tool call).
 */
export const policyPeers: PeerRules = {
  "/steward.v1.PolicyAdmin/": ["gateway"],
  "/steward.v1.PolicyDecision/": ["gateway", "tool-exec"],
};

/** One gRPC server for the PDP and its administration; with mutual TLS, only the peers above get through. */
export function createPolicyGrpcServer(deps: { handle: DecisionHandler; admin: PolicyAdmin; logger: Logger }): grpc.Server {
  const server = createGrpcServer({ interceptors: [allowPeers(policyPeers, deps.logger)] });
  server.addService(PolicyDecisionService, policyDecisionService(deps.handle, deps.logger));
  server.addService(PolicyAdminService, policyAdminService(deps.admin, deps.logger));
  return server;
}

import { createGrpcServer, grpc, grpcError, type Logger } from "@steward/platform";
import { PolicyDecisionService, type PolicyDecisionServer } from "@steward/proto";
import type { DecisionHandler } from "../../app/decide-request";

/** The PolicyDecision gRPC service. Malformed requests are INVALID_ARGUMENT; other failures UNKNOWN. */
export function createPolicyGrpcServer(deps: { handle: DecisionHandler; logger: Logger }): grpc.Server {
  const impl: PolicyDecisionServer = {
    decide(call, callback) {
      const req = call.request;
      if (!req.principal?.tenantId || !req.principal.userId || !req.action) {
        callback(grpcError(grpc.status.INVALID_ARGUMENT, "principal.tenant_id, principal.user_id and action are required"));
        return;
      }
      deps
        .handle({
          tenantId: req.principal.tenantId,
          userId: req.principal.userId,
          tokenRoles: req.principal.rolesFromToken ? req.principal.roles : null,
          action: req.action,
          resource: { type: req.resource?.type ?? "", id: req.resource?.id ?? "" },
          context: req.context,
        })
        .then((d) =>
          callback(null, { permit: d.permit, code: d.code, reasons: [...d.reasons], policyIds: [...d.policyIds] }),
        )
        .catch((err: unknown) => {
          deps.logger.error({ err }, "decision failed");
          callback(grpcError(grpc.status.UNKNOWN, "decision failed"));
        });
    },
  };
  const server = createGrpcServer();
  server.addService(PolicyDecisionService, impl);
  return server;
}

import {
  allowPeers,
  callStreamsOf,
  createGrpcServer,
  grpc,
  grpcError,
  serveCallStream,
  type CallStreams,
  type Logger,
  type PeerRules,
} from "@steward/platform";
import { PolicyAdminService, PolicyDecisionService, type DecideRequest, type DecideResponse, type PolicyDecisionServer } from "@steward/proto";
import type { DecisionHandler } from "@steward/pdp";
import type { PolicyAdmin } from "../../app/admin";
import { tracedDecision } from "../tracing/decision-span";
import { policyAdminService } from "./admin-service";

/** One decision, as both `Decide` and `DecideEach` answer it. Malformed requests are INVALID_ARGUMENT; other failures UNKNOWN. */
function decisionOf(handle: DecisionHandler, logger: Logger) {
  return async (req: DecideRequest, traceparent: string | undefined): Promise<DecideResponse> => {
    if (!req.principal?.tenantId || !req.principal.userId || !req.action) {
      throw grpcError(grpc.status.INVALID_ARGUMENT, "principal.tenant_id, principal.user_id and action are required");
    }
    const query = {
      tenantId: req.principal.tenantId,
      userId: req.principal.userId,
      tokenRoles: req.principal.rolesFromToken ? req.principal.roles : null,
      action: req.action,
      resource: { type: req.resource?.type ?? "", id: req.resource?.id ?? "" },
      context: req.context,
    };
    try {
      const d = await tracedDecision(handle, query, traceparent);
      return { permit: d.permit, code: d.code, reasons: [...d.reasons], policyIds: [...d.policyIds] };
    } catch (err) {
      logger.error({ err }, "decision failed");
      throw grpcError(grpc.status.UNKNOWN, "decision failed");
    }
  };
}

/** The PolicyDecision service: unary `Decide`, and the same decisions on a call stream (`DecideEach`). */
function policyDecisionService(handle: DecisionHandler, logger: Logger, streams: CallStreams): PolicyDecisionServer {
  const decide = decisionOf(handle, logger);
  return {
    decide(call, callback) {
      const traceparent = call.metadata.get("traceparent")[0];
      decide(call.request, typeof traceparent === "string" ? traceparent : undefined).then(
        (response) => callback(null, response),
        (err: grpc.ServiceError) => callback(err),
      );
    },
    decideEach: serveCallStream(
      streams,
      (req: DecideRequest, meta) => decide(req, meta.traceparent),
      (err) => err as grpc.ServiceError,
    ),
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
  server.addService(PolicyDecisionService, policyDecisionService(deps.handle, deps.logger, callStreamsOf(server)));
  server.addService(PolicyAdminService, policyAdminService(deps.admin, deps.logger));
  return server;
}

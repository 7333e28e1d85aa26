import {
  allowPeers,
  callStreamsOf,
  createGrpcServer,
  grpc,
  grpcError,
  isPostgresUnavailable,
  serveCallStream,
  type CallMeta,
  type CallStreams,
  type Logger,
  type PeerRules,
} from "@steward/platform";
import { ToolExecService, type InvokeRequest, type InvokeResponse, type ListToolsResponse, type ToolExecServer } from "@steward/proto";
import type { ToolRegistry } from "../../domain/registry";
import { CallerGoneError, InvalidArgumentsError, ToolUnavailableError, UnknownToolError, type InvokeHandler } from "../../app/invoke-tool";
import { RunNotOwnedError } from "../../app/run-owner";

/**
 * Maps the handler's errors to gRPC statuses, once: unknown tool → NOT_FOUND, bad arguments → INVALID_ARGUMENT,
 * a run that is not the caller's tenant's and user's → PERMISSION_DENIED.
 */
function toStatus(err: unknown, logger: Logger | undefined, call: { run_id: string; tool: string }): grpc.ServiceError {
  if (isGrpcStatus(err)) return err; // already a status (a malformed request, a server still starting)
  if (err instanceof UnknownToolError) return grpcError(grpc.status.NOT_FOUND, err.message);
  if (err instanceof RunNotOwnedError) return grpcError(grpc.status.PERMISSION_DENIED, err.message);
  if (err instanceof InvalidArgumentsError) return grpcError(grpc.status.INVALID_ARGUMENT, err.message);
  if (err instanceof CallerGoneError) {
    // Said at info: a dropped call is how a dead runner's orphaned work ends (its successor sends it again).
    logger?.info(call, "call dropped: its caller is gone; nothing kept");
    return grpcError(grpc.status.CANCELLED, err.message);
  }
  // The caller tries again later: nothing of the call was kept.
  if (err instanceof ToolUnavailableError || isPostgresUnavailable(err)) return grpcError(grpc.status.UNAVAILABLE, "tool-exec cannot reach its database");
  logger?.error({ err }, "invoke failed");
  return grpcError(grpc.status.UNKNOWN, "invoke failed");
}

/** A status made with `grpcError` (its code, details and metadata), not any error that happens to have a numeric code. */
const isGrpcStatus = (err: unknown): err is grpc.ServiceError =>
  err instanceof Error && typeof (err as grpc.ServiceError).code === "number" && (err as grpc.ServiceError).metadata instanceof grpc.Metadata;

/** Only the agent-runner drives tools (SPEC §10); with mutual TLS every other identity is refused (the gateway may list them). */
export const toolExecPeers: PeerRules = {
  "/steward.v1.ToolExec/": ["agent-runner"],
  // The gateway reads the catalogue (MCP search_capabilities, docs/mcp.md) and never invokes.
  "/steward.v1.ToolExec/ListTools": ["agent-runner", "gateway"],
};

interface ServerDeps {
  registry: ToolRegistry;
  invoke: InvokeHandler;
  logger: Logger;
}

export function createToolExecGrpcServer(deps: ServerDeps): grpc.Server {
  const server = createGrpcServer({ interceptors: [allowPeers(toolExecPeers, deps.logger)] });
  const impl = toolExecImpl(deps);
  server.addService(
    ToolExecService,
    servedBy(() => impl, callStreamsOf(server), deps.logger),
  );
  return server;
}

/**
 * A server bound before its tools are ready (PostgreSQL may not answer yet): until `attach`, every call
 * answers UNAVAILABLE, which callers already treat as "try again".
 */
export function createDeferredToolExecServer(logger?: Logger): { server: grpc.Server; attach(deps: ServerDeps): void } {
  let impl: ToolExecImpl | null = null;
  const server = createGrpcServer({ interceptors: [allowPeers(toolExecPeers, logger)] });
  server.addService(
    ToolExecService,
    servedBy(() => impl, callStreamsOf(server), logger),
  );
  return { server, attach: (deps) => void (impl = toolExecImpl(deps)) };
}

/** What the service does, whichever way a call arrives (unary, or on a call stream). */
interface ToolExecImpl {
  listTools(): ListToolsResponse;
  invoke(req: InvokeRequest, meta: CallMeta): Promise<InvokeResponse>;
}

const starting = () => grpcError(grpc.status.UNAVAILABLE, "tool-exec is starting");

/** The gRPC face of `impl` (null while tool-exec is starting): unary `ListTools` and `Invoke`, and `InvokeEach`. */
function servedBy(implOf: () => ToolExecImpl | null, streams: CallStreams, logger?: Logger): ToolExecServer {
  const invoke = (req: InvokeRequest, meta: CallMeta): Promise<InvokeResponse> => {
    const impl = implOf();
    return impl ? impl.invoke(req, meta) : Promise.reject(starting());
  };
  const statusOf = (err: unknown, req: InvokeRequest): grpc.ServiceError => toStatus(err, logger, { run_id: req.runId, tool: req.toolName });
  return {
    listTools(_call, callback) {
      const impl = implOf();
      if (impl) callback(null, impl.listTools());
      else callback(starting());
    },
    invoke(call, callback) {
      const traceparent = call.metadata.get("traceparent")[0];
      const deadline = call.getDeadline();
      const deadlineAt = deadline instanceof Date ? deadline.getTime() : Number(deadline);
      // The caller's cancel, its deadline passing or its connection dropping stop the running tool (a query with
      // it). A plain controller of this call only, its listener removed when the call ends.
      const callerGone = new AbortController();
      const onCancelled = () => callerGone.abort();
      call.on("cancelled", onCancelled);
      if (call.cancelled) onCancelled();
      invoke(call.request, {
        traceparent: typeof traceparent === "string" ? traceparent : undefined,
        deadlineMs: Number.isFinite(deadlineAt) ? deadlineAt - Date.now() : undefined,
        signal: callerGone.signal,
      })
        .then(
          (response) => callback(null, response),
          (err: unknown) => callback(statusOf(err, call.request)),
        )
        .finally(() => call.removeListener("cancelled", onCancelled));
    },
    // A held call asks the PDP while its caller commits the call's record; the rest waits for its release.
    invokeEach: serveCallStream(streams, invoke, statusOf, { preparesHeld: true }),
  };
}

function toolExecImpl(deps: ServerDeps): ToolExecImpl {
  const tools = deps.registry.list().map((t) => ({
    name: t.name,
    description: t.description,
    inputSchemaJson: JSON.stringify(t.input),
    safety: t.safety,
    policyPoint: t.policyPoint,
    idempotent: t.idempotent,
    abortOnDeny: t.abortOnDeny,
    requireConfirmation: t.requireConfirmation,
    exploration: t.exploration,
    states: [...(t.states ?? [])],
  }));
  return {
    listTools: () => ({ tools }),
    async invoke(req, meta) {
      if (!req.runId || !req.tenantId || !req.userId || !req.toolName) {
        throw grpcError(grpc.status.INVALID_ARGUMENT, "run_id, tenant_id, user_id and tool_name are required");
      }
      const o = await deps.invoke({
        runId: req.runId,
        tenantId: req.tenantId,
        userId: req.userId,
        stepNo: req.stepNo,
        callId: req.callId,
        toolName: req.toolName,
        argumentsJson: req.argumentsJson,
        elevationSessionId: req.elevationSessionId,
        mcpSessionId: req.mcpSessionId,
        mcpMode: req.mcpMode,
        traceparent: meta.traceparent,
        // A little short of the caller's deadline, so that the answer still reaches it.
        deadlineMs: meta.deadlineMs === undefined ? undefined : meta.deadlineMs - 50,
        signal: meta.signal,
        released: meta.released,
      });
      return {
        fingerprint: o.fingerprint,
        decision: o.decision,
        resultCode: o.resultCode,
        resultJson: JSON.stringify(o.result),
        replayed: o.replayed,
        nextState: o.nextState ?? "",
        decisionMs: o.decisionMs,
        toolMs: o.toolMs,
      };
    },
  };
}

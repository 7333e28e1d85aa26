import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { BadRequestError, ForbiddenError, RateLimitedError, UnavailableError, type Logger } from "@steward/platform";
import type { Authenticate } from "../auth";
import type { DecideForSession } from "../../../app/decide-for-session";
import { PDP_UNAVAILABLE } from "../../../app/decide-for-session";
import { MCP_MODE_HEADER, parseMcpMode } from "../../../domain/mcp-mode";
import { CLOSE_REASONS, createMcpSessions, type McpSessionJournal, type McpSessionLimits } from "../../mcp/sessions";
import { createSessionServer, type SessionServerDeps } from "../../mcp/session-server";
import { BODY_LIMIT, problemOf } from "../problem";
import { traceparentOf } from "../trace-context";

export interface McpRoutesDeps {
  readonly authenticate: Authenticate;
  readonly logger: Logger;
  /** The MCP server's dependencies; without them /mcp is not served (unit tests of other routes). */
  readonly mcp?: Omit<SessionServerDeps, "logger"> & {
    readonly limits?: Partial<McpSessionLimits>;
    /** Where sessions opened and closed are recorded (main.ts: PostgreSQL); none: not recorded. */
    readonly journal?: McpSessionJournal;
  };
}

/** Defaults of the session bounds (GATEWAY_MCP_* in config.ts). */
export const MCP_SESSION_DEFAULTS: McpSessionLimits = { perUser: 8, idleMs: 1_800_000, max: 10_000, perTenant: 1_000 };

const SESSION_HEADER = "mcp-session-id";

interface SessionHandle {
  readonly transport: StreamableHTTPServerTransport;
  readonly server: Server;
  close(): Promise<void>;
}

/** The transport's own JSON-RPC error answer (the SDK's shape), for requests refused before reaching a transport. */
function jsonRpcError(reply: FastifyReply, status: number, code: number, message: string): FastifyReply {
  return reply.status(status).type("application/json").send({ jsonrpc: "2.0", error: { code, message }, id: null });
}

/**
 * Steward as an MCP server (docs/mcp.md): streamable HTTP at `/mcp` with stateful sessions. Every request
 * carries the same bearer token as the REST API (401 problem otherwise); the initialize request opens a session
 * in the mode its `Steward-Mcp-Mode` header names, if the PDP permits `agent.mcp.session` on that mode. A session
 * belongs to the token's tenant and user: anybody else's request on it is answered exactly as an unknown session.
 * The gateway's rate limits and body limit apply as to every route (they run before this handler); a JSON-RPC
 * batch is refused, so that one request is one message and the limits count calls, not requests (MCP dropped
 * batches in its 2025-06-18 revision).
 */
export function registerMcpRoutes(app: FastifyInstance, deps: McpRoutesDeps): void {
  const mcp = deps.mcp;
  if (!mcp) return;
  const logger = deps.logger;
  const sessions = createMcpSessions<SessionHandle>({ ...MCP_SESSION_DEFAULTS, ...mcp.limits }, logger, Date.now, mcp.journal);
  app.addHook("onClose", async () => sessions.closeAll());

  async function open(request: FastifyRequest, reply: FastifyReply, principal: Awaited<ReturnType<Authenticate>>): Promise<void> {
    const mode = parseMcpMode(request.headers[MCP_MODE_HEADER]);
    if (mode === null) throw new BadRequestError("the Steward-Mcp-Mode header must be observe, execute or admin");
    const id = randomUUID();
    const session = { id, mode };
    const decide: DecideForSession = mcp!.decide;
    const decision = await decide(principal, "agent.mcp.session", { type: "resource", id: mode }, session, { traceparent: traceparentOf(request) });
    if (decision.code === PDP_UNAVAILABLE) throw new UnavailableError("the policy decision point is unavailable; try again");
    if (!decision.permit) throw new ForbiddenError(`the policy does not let you open an MCP session in ${mode} mode`);
    if (!sessions.tenantHasRoom(principal.tenantId)) {
      throw new RateLimitedError("your tenant holds as many MCP sessions on this gateway as it may; close one first", { retryAfterSeconds: 60 });
    }
    if (!sessions.hasRoom()) throw new UnavailableError("this gateway holds as many MCP sessions as it may; try again later");
    const server = createSessionServer(principal, session, { ...mcp!, logger });
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      maxRequestBodySize: BODY_LIMIT,
      // The transport's own DNS-rebinding protection, behind the gateway's check of every request: a session
      // answers only the Host (and the Origin, if any) its initialize came with.
      enableDnsRebindingProtection: true,
      allowedHosts: request.headers.host !== undefined ? [request.headers.host] : [],
      allowedOrigins: request.headers.origin !== undefined ? [request.headers.origin] : [],
      onsessionclosed: () => sessions.close(id, CLOSE_REASONS.clientEnded),
    });
    transport.onclose = () => sessions.close(id, CLOSE_REASONS.transportClosed);
    // Recorded before the client learns the session's id: a session the audit does not know never exists.
    try {
      await sessions.add({ id, tenantId: principal.tenantId, userId: principal.userId, mode, handle: { transport, server, close: () => server.close() } });
    } catch (err) {
      logger.warn({ err, mcp_session: id, tenant_id: principal.tenantId, mode }, "an MCP session could not be recorded; not opened");
      throw new UnavailableError("the MCP session could not be recorded; try again", { cause: err });
    }
    try {
      await server.connect(transport);
    } catch (err) {
      sessions.close(id, CLOSE_REASONS.initializeFailed);
      throw err;
    }
    reply.hijack();
    await serve(transport, request, reply, id);
    // The transport refused the initialize (e.g. 406): no client holds this id.
    if (transport.sessionId === undefined) sessions.close(id, CLOSE_REASONS.initializeFailed);
  }

  /** Hands a request to a session's transport; the reply is the transport's from here on. */
  async function serve(transport: StreamableHTTPServerTransport, request: FastifyRequest, reply: FastifyReply, id: string): Promise<void> {
    try {
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (err) {
      logger.error({ err, mcp_session: id }, "an MCP request failed in its transport");
      if (!reply.raw.headersSent)
        reply.raw.writeHead(500, { "content-type": "application/problem+json" }).end(JSON.stringify(problemOf(500, 10500, "internal error")));
      else reply.raw.end();
    }
  }

  async function handle(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | void> {
    // Before anything else: a request without a valid token learns nothing, not even whether a session exists.
    const principal = await deps.authenticate(request.headers.authorization);
    if (Array.isArray(request.body))
      return jsonRpcError(reply, 400, -32600, "Invalid Request: send one JSON-RPC message per request; batches are not accepted");
    const sessionId = request.headers[SESSION_HEADER];
    if (sessionId === undefined) {
      if (request.method === "POST" && isInitializeRequest(request.body)) return open(request, reply, principal);
      return jsonRpcError(reply, 400, -32000, "Bad Request: Mcp-Session-Id header is required");
    }
    const session = typeof sessionId === "string" ? sessions.find(sessionId, principal) : undefined;
    // Unknown, closed, or somebody else's: one answer for all (the transport's own for an unknown session).
    if (!session) return jsonRpcError(reply, 404, -32001, "Session not found");
    reply.hijack();
    await serve(session.handle.transport, request, reply, session.id);
  }

  const hidden = { schema: { hide: true }, exposeHeadRoute: false } as const;
  app.post("/mcp", hidden, handle);
  app.get("/mcp", hidden, handle);
  app.delete("/mcp", hidden, handle);
}

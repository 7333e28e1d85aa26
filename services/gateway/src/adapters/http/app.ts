import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from "fastify";
import type { Logger, Readiness } from "@steward/platform";
import { BODY_LIMIT, createErrorHandler, notFoundHandler } from "./problem";
import { serverOptionsOf, type HttpLimits } from "./http-limits";
import { answerUnmetExpectation, handleClientError, requireHost } from "./client-errors";
import { LOOPBACK_HOSTS, hostNames, registerHostOriginCheck, type ServedNames } from "./host-origin";
import { registerJsonBodyParser } from "./json-body";
import { registerRateLimits, type RateLimitDeps } from "./rate-limit/register";
import { registerRouteGuard, type RouteGuardDeps } from "./route-guard";
import { useRouteSchemas } from "./route-schemas";
import { registerOpenApi } from "./openapi/register";
import { registerAdminRoutes, type AdminRoutesDeps } from "./routes/admin";
import { registerAdminRunRoutes } from "./routes/admin-runs";
import { registerKnowledgeRoutes } from "./routes/knowledge";
import { registerProposalRoutes } from "./routes/proposals";
import { registerMemberRoutes } from "./routes/members";
import { registerDatasetRoutes, type DatasetRoutesDeps } from "./routes/datasets";
import { registerProbeRoutes } from "./routes/probes";
import { registerRunRoutes, type RunRoutesDeps } from "./routes/runs";
import { registerThreadRoutes, type ThreadRoutesDeps } from "./routes/threads";
import { registerStatusRoutes, type StatusRoutesDeps } from "./routes/status";
import { registerConsoleRoutes, type ConsoleRoutesDeps } from "./routes/console";
import { registerMcpRoutes, type McpRoutesDeps } from "./routes/mcp";
import { requestLoggerFactory } from "./request-logger";

export interface AppDeps
  extends RunRoutesDeps, ThreadRoutesDeps, AdminRoutesDeps, StatusRoutesDeps, RouteGuardDeps, ConsoleRoutesDeps, McpRoutesDeps, DatasetRoutesDeps {
  readonly logger: Logger;
  /** Whether the dependencies the API needs are reachable (PostgreSQL, NATS, the PDP), with reasons. */
  readonly readiness: Readiness;
  /** Request, idle and keep-alive limits of the server; defaults in HttpLimits. */
  readonly http?: HttpLimits;
  /** Rate limits per tenant, user and client address over shared counters; none when absent (unit tests). */
  readonly rateLimits?: RateLimitDeps;
  /** The host names and origins requests may name (GATEWAY_ALLOWED_HOSTS, GATEWAY_ALLOWED_ORIGINS); loopback when absent. */
  readonly servedNames?: ServedNames;
}

const LOOPBACK: ServedNames = { hosts: hostNames(LOOPBACK_HOSTS)(undefined, "hosts"), origins: new Set() };

/** The gateway's HTTP surface, without ports: main.ts listens, tests use inject(). */
export function buildApp(deps: AppDeps): FastifyInstance {
  const handleError = createErrorHandler(deps.logger);
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // No line per request: the services log per step and per refusal (and metrics time every request).
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: requestLoggerFactory,
    bodyLimit: BODY_LIMIT,
    // A path segment may name a user (membership routes): up to 256 characters, each up to 12 when percent-encoded.
    routerOptions: { maxParamLength: 3072 },
    ...serverOptionsOf(deps.http),
    // Event streams are long-lived; shutting down must not wait for their clients to leave.
    forceCloseConnections: true,
    // A URL that does not decode is answered before routing: through the same problem mapping.
    frameworkErrors: handleError,
    // Requests refused below routing (not HTTP/1.1, a head too large, too slow) get a problem document too.
    clientErrorHandler: handleClientError,
  });
  app.server.on("checkExpectation", answerUnmetExpectation);
  app.setErrorHandler(handleError);
  useRouteSchemas(app);
  app.addHook("onRequest", requireHost);
  registerHostOriginCheck(app, deps.servedNames ?? LOOPBACK);
  registerJsonBodyParser(app);
  // Before every route (and the not-found handler): a refused request never reaches one.
  if (deps.rateLimits) registerRateLimits(app, { ...deps.rateLimits, authenticate: deps.authenticate });
  registerRouteGuard(app, deps);
  app.setNotFoundHandler(notFoundHandler);
  // The document collects the routes as they are added: every route is added after it, in this plugin.
  registerOpenApi(app);
  void app.register(async (api) => {
    registerProbeRoutes(api, deps);
    registerRunRoutes(api, deps);
    registerThreadRoutes(api, deps);
    registerAdminRoutes(api, deps);
    registerAdminRunRoutes(api, deps);
    registerStatusRoutes(api, deps);
    registerKnowledgeRoutes(api, deps);
    registerProposalRoutes(api, deps);
    registerMemberRoutes(api, deps);
    registerDatasetRoutes(api, deps);
    registerConsoleRoutes(api, deps);
    registerMcpRoutes(api, deps);
  });
  return app;
}

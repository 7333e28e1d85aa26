import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import type { Logger } from "@steward/platform";
import { createErrorHandler, notFoundHandler } from "./problem";
import { registerAdminRoutes, type AdminRoutesDeps } from "./routes/admin";
import { registerKnowledgeRoutes } from "./routes/knowledge";
import { registerRunRoutes, type RunRoutesDeps } from "./routes/runs";

export interface AppDeps extends RunRoutesDeps, AdminRoutesDeps {
  readonly logger: Logger;
  /** Whether the dependencies the API needs are reachable (PostgreSQL, NATS). */
  readonly ready: () => Promise<boolean>;
}

/** The gateway's HTTP surface, without ports: main.ts listens, tests use inject(). */
export function buildApp(deps: AppDeps): FastifyInstance {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    disableRequestLogging: true,
    bodyLimit: 256 * 1024,
    // Event streams are long-lived; shutting down must not wait for their clients to leave.
    forceCloseConnections: true,
  });
  app.setErrorHandler(createErrorHandler(deps.logger));
  app.setNotFoundHandler(notFoundHandler);
  app.get("/healthz", async () => ({ status: "ok" }));
  app.get("/readyz", async (_request, reply) => {
    const ok = await deps.ready().catch(() => false);
    return reply.status(ok ? 200 : 503).send({ status: ok ? "ready" : "not ready" });
  });
  registerRunRoutes(app, deps);
  registerAdminRoutes(app, deps);
  registerKnowledgeRoutes(app, deps);
  return app;
}

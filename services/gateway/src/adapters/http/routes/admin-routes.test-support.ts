import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import { createLogger, createPool, ForbiddenError, UnauthenticatedError, type Pool } from "@steward/platform";
import type { PolicyPoint } from "@steward/contract";
import { createErrorHandler, notFoundHandler } from "../problem";
import { registerJsonBodyParser } from "../json-body";
import { registerRouteGuard } from "../route-guard";
import { useRouteSchemas } from "../route-schemas";
import type { Principal } from "../../../domain/principal";
import type { Authorize } from "../../../app/authorize";
import { freshDatabase } from "../../../../../../test/support/databases";

export interface AdminRouteHarness {
  readonly pool: Pool;
  /** The policy points the stand-in PDP was asked for. */
  readonly asked: PolicyPoint[];
  call(method: string, path: string, token: string | null, body?: string): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/**
 * Tenant administration routes over a real socket and real PostgreSQL (a fresh database). Tokens are stand-ins
 * ("Bearer <tenant>.<user>"), and the stand-in PDP permits the users in `admins` ("<tenant>.<user>"): the real
 * PDP is the e2e suite's. Not built into the service (tsconfig excludes *.test-support.ts).
 */
export async function startAdminRoutes(
  databasePrefix: string,
  admins: ReadonlySet<string>,
  register: (app: FastifyInstance, deps: { pool: Pool; authenticate: (authorization?: string) => Promise<Principal>; authorize: Authorize }) => void,
): Promise<AdminRouteHarness> {
  const db = await freshDatabase(databasePrefix);
  const pool = createPool(db.url, { max: 3 });
  const logger = createLogger("gateway-test", "silent");
  const app = Fastify({ loggerInstance: logger as FastifyBaseLogger });
  const asked: PolicyPoint[] = [];
  app.setErrorHandler(createErrorHandler(logger));
  app.setNotFoundHandler(notFoundHandler);
  registerJsonBodyParser(app);
  useRouteSchemas(app);
  const deps = {
    pool,
    authenticate: async (authorization?: string) => {
      const m = /^Bearer (\w+)\.(\w+)$/.exec(authorization ?? "");
      if (!m) throw new UnauthenticatedError();
      return { tenantId: m[1], userId: m[2], roles: ["admin"] } satisfies Principal;
    },
    authorize: (async (principal, point) => {
      asked.push(point);
      if (!admins.has(`${principal.tenantId}.${principal.userId}`)) throw new ForbiddenError();
      return undefined;
    }) satisfies Authorize,
  };
  // The gateway's one guard, as buildApp registers it: the routes declare their policy points.
  registerRouteGuard(app, deps);
  register(app, deps);
  const base = await app.listen({ port: 0, host: "127.0.0.1" });
  return {
    pool,
    asked,
    async call(method, path, token, body) {
      const headers: Record<string, string> = {};
      if (token) headers.authorization = `Bearer ${token}`;
      if (body !== undefined) headers["content-type"] = "application/json";
      const res = await fetch(`${base}${path}`, { method, headers, body });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    },
    async close() {
      await app.close();
      await pool.end();
      await db.drop();
    },
  };
}

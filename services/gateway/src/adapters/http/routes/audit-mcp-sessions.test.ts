import { randomUUID } from "node:crypto";
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import { createLogger, createPool, ForbiddenError, UnauthenticatedError, type Pool } from "@steward/platform";
import { listMcpSessions, recordMcpSessionClosed, recordMcpSessionOpened } from "@steward/store";
import type { PolicyPoint } from "@steward/contract";
import type { PolicyAdminApi } from "@steward/proto";
import { freshDatabase } from "../../../../../../test/support/databases";
import { createErrorHandler, notFoundHandler } from "../problem";
import { registerRouteGuard } from "../route-guard";
import { useRouteSchemas } from "../route-schemas";
import { registerAdminRoutes, type McpSessionLog } from "./admin";

/**
 * GET /v1/audit/mcp-sessions over real PostgreSQL (a fresh database), through the gateway's route guard and
 * schemas, on a free port (fastify's inject, light-my-request, does not load under this jest: its `cookie` is ESM). Tokens are stand-ins ("Bearer <tenant>.<user>"); the stand-in PDP
 * permits acme.root and globex.gus.
 */
describe("GET /v1/audit/mcp-sessions", () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: Pool;
  let app: FastifyInstance;
  let base = "";
  const asked: PolicyPoint[] = [];
  /** Every list the route asked the store for: a refused request asks for none. */
  const listed: unknown[] = [];
  const [s1, s2, s3, foreign] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];

  beforeAll(async () => {
    db = await freshDatabase("steward_gw_audit_mcp");
    pool = createPool(db.url, { max: 3 });
    const logger = createLogger("gateway-test", "silent");
    app = Fastify({ loggerInstance: logger as FastifyBaseLogger });
    app.setErrorHandler(createErrorHandler(logger));
    app.setNotFoundHandler(notFoundHandler);
    useRouteSchemas(app);
    const deps = {
      authenticate: async (authorization?: string) => {
        const m = /^Bearer (\w+)\.(\w+)$/.exec(authorization ?? "");
        if (!m) throw new UnauthenticatedError();
        return { tenantId: m[1], userId: m[2], roles: [] };
      },
      authorize: async (principal: { tenantId: string; userId: string }, point: PolicyPoint) => {
        asked.push(point);
        if (!["acme.root", "globex.gus"].includes(`${principal.tenantId}.${principal.userId}`)) throw new ForbiddenError();
        return undefined;
      },
    };
    registerRouteGuard(app, deps);
    const mcpSessionLog: McpSessionLog = {
      list: (tenantId, filter, page) => {
        listed.push({ tenantId, filter, page });
        return listMcpSessions(pool, tenantId, filter, page);
      },
    };
    registerAdminRoutes(app, { policyAdmin: {} as PolicyAdminApi, mcpSessionLog });
    base = await app.listen({ port: 0, host: "127.0.0.1" });

    await recordMcpSessionOpened(pool, { id: s1, tenantId: "acme", userId: "ana", mode: "observe" });
    await recordMcpSessionOpened(pool, { id: s2, tenantId: "acme", userId: "ben", mode: "execute" });
    await recordMcpSessionOpened(pool, { id: s3, tenantId: "acme", userId: "ana", mode: "execute" });
    await recordMcpSessionOpened(pool, { id: foreign, tenantId: "globex", userId: "gus", mode: "admin" });
    await recordMcpSessionClosed(pool, { id: s1, tenantId: "acme" }, "idle");
  });

  afterAll(async () => {
    await app?.close();
    await pool?.end();
    await db?.drop();
  });

  const get = async (url: string, token: string | null = "acme.root") => {
    const res = await fetch(`${base}${url}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    return { status: res.status, body: (await res.json()) as any };
  };

  it("lists the caller's tenant's sessions newest first, with when and why each closed", async () => {
    const res = await get("/v1/audit/mcp-sessions");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ page: 1, page_size: 20, total: 3 });
    expect(res.body.items.map((s: { id: string }) => s.id)).toEqual([s3, s2, s1]);
    expect(res.body.items[2]).toEqual({
      id: s1,
      user_id: "ana",
      mode: "observe",
      opened_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
      closed_at: expect.stringMatching(/Z$/),
      close_reason: "idle",
    });
    expect(res.body.items[0]).toMatchObject({ closed_at: null, close_reason: null });
    expect(asked.at(-1)).toBe("audit.decision.read");
    // Another tenant's auditor sees only theirs.
    expect((await get("/v1/audit/mcp-sessions", "globex.gus")).body.items.map((s: { id: string }) => s.id)).toEqual([foreign]);
  });

  it("filters by user, mode and open, and pages", async () => {
    const ids = async (query: string) => (await get(`/v1/audit/mcp-sessions?${query}`)).body.items.map((s: { id: string }) => s.id);
    expect(await ids("user_id=ana")).toEqual([s3, s1]);
    expect(await ids("mode=execute")).toEqual([s3, s2]);
    expect(await ids("open=true")).toEqual([s3, s2]);
    expect(await ids("open=false")).toEqual([s1]);
    expect(await ids("user_id=ana&mode=execute&open=true")).toEqual([s3]);
    expect(await get("/v1/audit/mcp-sessions?page=2&page_size=2")).toEqual({
      status: 200,
      body: { items: [expect.objectContaining({ id: s1 })], page: 2, page_size: 2, total: 3 },
    });
  });

  it("refuses bad filters (400), a bad token (401) and a caller the PDP denies (403), reading nothing", async () => {
    const before = listed.length;
    for (const query of ["open=yes", "mode=root", "page_size=101", "page=0", "user_id=", "user_id=a%01b", "run_id=x", "open=true&open=false"]) {
      const res = await get(`/v1/audit/mcp-sessions?${query}`);
      expect([query, res.status, res.body.code]).toEqual([query, 400, 10001]);
    }
    expect((await get("/v1/audit/mcp-sessions", null)).status).toBe(401);
    const denied = await get("/v1/audit/mcp-sessions", "acme.ana");
    expect([denied.status, denied.body.code]).toEqual([403, 10031]);
    expect(listed.length).toBe(before);
  });
});

import { randomUUID } from "node:crypto";
import { busNames } from "@steward/contract";
import {
  answerStatusPings,
  channelCheck,
  connectNats,
  createLogger,
  createMetrics,
  createPool,
  createReadiness,
  grpcClientOptions,
  linkCheck,
  loadGrpcTls,
  natsAuth,
  onShutdown,
  postgresCheck,
  provisionTopology,
  retryUntilUp,
  serveHealth,
  startTracing,
  watchNatsLink,
  watchPools,
  type NatsConnection,
} from "@steward/platform";
import { createPdp, listenForActivations } from "@steward/pdp";
import { createPolicyAdminApi, createPolicyDecisionApi, createToolExecApi } from "@steward/proto";
import {
  createDirectPublisher,
  createOutboxRelay,
  datasetsFor,
  type DirectPublisher,
  listMcpSessions,
  readBacklog,
  readTenantBacklog,
  recordMcpSessionClosed,
  recordMcpSessionOpened,
} from "@steward/store";
import { buildApp } from "./adapters/http/app";
import { createStreamSlots } from "./adapters/http/stream-slots";
import { createAuthenticator } from "./adapters/http/auth";
import { createAuthorizer } from "./app/authorize";
import { createGatewayDecisions } from "./app/gateway-decisions";
import { createRunHandler } from "./app/create-run";
import { createPgRunWriter } from "./adapters/pg/run-writer";
import { createRunControls } from "./app/control-run";
import { createPlatformStatus, createStatusReader, createTenantStatus } from "./app/platform-status";
import { developmentSecret, existingDevelopmentSecret } from "./dev-secret";
import { devSecretPath, readGatewayConfig } from "./config";
import { createDeferredRunFeed } from "./adapters/nats/run-feed";
import { createBusProbe } from "./adapters/nats/platform-probe";
import { createRateLimits } from "./adapters/http/rate-limit/compose";
import { instrumentHttp } from "./adapters/http/metrics-hooks";
import { traceHttp } from "./adapters/http/tracing-hooks";
import { devSignInFrom } from "./adapters/http/routes/dev-sign-in";
import { runCreationAllowance } from "./adapters/http/rate-limit/register";
import { createSessionDecider } from "./app/decide-for-session";
import { createRunFollower } from "./app/run-outcome";
import { createRunReads } from "./app/read-runs";
import { createCapabilityCatalogue } from "./app/capability-catalogue";
import { createAdminRunReads } from "./app/read-admin-runs";
import { createPgRunStore } from "./adapters/pg/run-store";
import { createPgAdminRunStore } from "./adapters/pg/admin-run-store";

/**
 * Serves from its first second: runs are accepted whenever PostgreSQL answers (the outbox keeps their
 * commands until NATS does); NATS is joined whenever it answers; /readyz says what is missing.
 */
async function main(): Promise<void> {
  const config = readGatewayConfig(process.env, (home) => existingDevelopmentSecret(devSecretPath(home)));
  const tls = loadGrpcTls(config, "gateway");
  const natsAs = natsAuth(config, "gateway");
  const logger = createLogger("gateway", config.LOG_LEVEL);
  // One span per request (tracing-hooks.ts) and per outbox publish when an OTLP endpoint is set; else nothing.
  const tracing = startTracing("gateway");
  const names = busNames(config.STEWARD_NATS_NAMESPACE);
  const instance = `gateway-${randomUUID().slice(0, 8)}`;
  const pool = createPool(config.DATABASE_URL, {
    applicationName: "steward-gateway",
    max: config.PG_POOL_MAX,
    onError: (err) => logger.warn({ code: (err as { code?: string }).code }, "a PostgreSQL connection was lost"),
  });
  const toPolicy = grpcClientOptions(tls, "policy");
  const pdp = createPolicyDecisionApi(config.POLICY_ADDR, toPolicy);
  const policyAdmin = createPolicyAdminApi(config.POLICY_ADDR, toPolicy);
  // The catalogue only (MCP search_capabilities): tool-exec lets the gateway list its tools, never invoke one.
  // Not a readiness check: the API serves without tool-exec; a search meanwhile answers 10503.
  const toolExec = createToolExecApi(config.TOOL_EXEC_ADDR, grpcClientOptions(tls, "tool-exec"));
  const readiness = createReadiness();
  readiness.add("postgres", postgresCheck(pool));
  readiness.add(
    "policy",
    channelCheck("the policy decision point", () => pdp.state()),
  );
  const nats = readiness.pending("nats", "connecting to NATS");
  const feed = createDeferredRunFeed(names);
  let nc: NatsConnection | undefined;
  // readGatewayConfig allows the generated secret only when STEWARD_ENV=development.
  const jwtSecret = config.STEWARD_JWKS_URL ? undefined : (config.STEWARD_JWT_SECRET ?? developmentSecret(devSecretPath(config.STEWARD_HOME)));
  const authenticate = createAuthenticator({
    secret: jwtSecret,
    jwksUrl: config.STEWARD_JWKS_URL,
    issuer: config.STEWARD_JWT_ISSUER,
    audience: config.STEWARD_JWT_AUDIENCE,
    maxTtlSeconds: config.STEWARD_JWT_MAX_TTL,
  });
  // Routes and MCP calls are decided in process, with the policy service's code, facts and decision log; the
  // policy service installs a new tenant's default set (asked then) and serves the policy administration.
  const routePdp = createPdp({ pool, policyDir: config.STEWARD_POLICY_DIR, logger }, { cacheTenants: config.POLICY_CACHE_TENANTS, installsDefault: false });
  const decide = createGatewayDecisions({ pdp: routePdp, policyService: pdp });
  const authorize = createAuthorizer({ decide, logger });
  const rateLimits = createRateLimits(pool, logger, {
    windowSeconds: config.GATEWAY_RATE_LIMIT_WINDOW_SECONDS,
    perUser: config.GATEWAY_RATE_LIMIT_PER_USER,
    perTenant: config.GATEWAY_RATE_LIMIT_PER_TENANT,
    runsPerUser: config.GATEWAY_RATE_LIMIT_RUNS_PER_USER,
    runsPerTenant: config.GATEWAY_RATE_LIMIT_RUNS_PER_TENANT,
    perAddress: config.GATEWAY_RATE_LIMIT_PER_ADDRESS,
  });
  // Set once NATS is connected; until then the relays publish what the gateway writes.
  let publisher: DirectPublisher | undefined;
  const runs = createPgRunWriter({ pool, namespace: config.STEWARD_NATS_NAMESPACE, publisher: () => publisher });
  const controls = createRunControls({ runs, namespace: config.STEWARD_NATS_NAMESPACE });
  const createRun = createRunHandler({ runs, namespace: config.STEWARD_NATS_NAMESPACE, deadlineSeconds: config.STEWARD_TEST_DEADLINE_SECONDS });
  // The held follows of runs (event streams, MCP calls waiting for their run): each user's and tenant's share.
  const streamSlots = createStreamSlots({
    perUser: config.GATEWAY_SSE_STREAMS_PER_USER,
    perTenant: config.GATEWAY_SSE_STREAMS_PER_TENANT,
    max: config.GATEWAY_SSE_STREAMS_MAX,
  });
  const app = buildApp({
    servedNames: { hosts: config.GATEWAY_ALLOWED_HOSTS, origins: config.GATEWAY_ALLOWED_ORIGINS },
    logger,
    // Decided once, at boot: on only in development (or a suite that asks for it), never with a JWKS issuer.
    devSignIn: devSignInFrom(config, jwtSecret),
    http: {
      requestTimeoutMs: config.GATEWAY_REQUEST_TIMEOUT_MS,
      connectionTimeoutMs: config.GATEWAY_CONNECTION_TIMEOUT_MS,
      keepAliveTimeoutMs: config.GATEWAY_KEEP_ALIVE_TIMEOUT_MS,
      maxRequestsPerSocket: config.GATEWAY_MAX_REQUESTS_PER_SOCKET,
    },
    rateLimits: rateLimits.deps,
    pool,
    datasetTenants: config.DATASET_TENANTS,
    streamSlots,
    authenticate,
    authorize,
    policyAdmin,
    mcpSessionLog: { list: (tenantId, filter, page) => listMcpSessions(pool, tenantId, filter, page) },
    controls,
    feed,
    createRun,
    mcp: {
      decide: createSessionDecider({ decide, logger }),
      createRun,
      controls,
      // An MCP call waiting for its run holds what an event stream holds: it counts against the same shares.
      follow: createRunFollower({ reads: createRunReads({ runs: createPgRunStore(pool) }), feed, holdSlot: (principal) => streamSlots.tryTake(principal) }),
      capabilities: createCapabilityCatalogue(async () => (await toolExec.listTools({ deadlineMs: 2000 })).tools),
      grantedDatasets: (tenantId, userId) => datasetsFor(pool, config.DATASET_TENANTS, tenantId, userId),
      adminRuns: createAdminRunReads({ runs: createPgAdminRunStore(pool), logger }),
      runAllowance: runCreationAllowance(rateLimits.deps),
      journal: {
        opened: async (session) => void (await recordMcpSessionOpened(pool, session)),
        closed: async (session, why) => void (await recordMcpSessionClosed(pool, session, why)),
      },
      limits: {
        perUser: config.GATEWAY_MCP_SESSIONS_PER_USER,
        idleMs: config.GATEWAY_MCP_IDLE_SECONDS * 1000,
        max: config.GATEWAY_MCP_SESSIONS_MAX,
        perTenant: config.GATEWAY_MCP_SESSIONS_PER_TENANT,
      },
    },
    readiness,
    status: createStatusReader({
      operatorTenant: config.STEWARD_OPERATOR_TENANT,
      platform: createPlatformStatus({
        gateway: () => readiness.report(),
        backlog: () => readBacklog(pool),
        bus: createBusProbe(() => nc, names, { inboxPrefix: natsAs.inboxPrefix }),
      }),
      tenant: createTenantStatus({ gateway: () => readiness.report(), backlog: (tenantId) => readTenantBacklog(pool, tenantId) }),
    }),
  });
  const metrics = createMetrics("gateway");
  watchPools(metrics, { main: pool });
  instrumentHttp(app, metrics);
  traceHttp(app);
  const address = await app.listen({ port: config.GATEWAY_PORT, host: config.GATEWAY_HOST });
  // The operator's port: the same health answers as the public port's, and the metrics, which only it serves.
  const ops = await serveHealth(readiness, { host: config.HEALTH_HOST, port: config.HEALTH_PORT }, { metrics });
  logger.info({ addr: address, health: ops.url }, "listening");

  let stopRelay: (() => Promise<void>) | undefined;
  let stopPings: (() => void) | undefined;
  let stopActivations: (() => void) | undefined;
  const stopping = new AbortController();
  onShutdown(logger, [
    async () => stopping.abort(),
    async () => stopPings?.(),
    async () => stopActivations?.(),
    async () => rateLimits.stop(),
    () => app.close(),
    async () => stopRelay?.(),
    async () => nc?.drain(),
    async () => pdp.close(),
    async () => toolExec.close(),
    async () => policyAdmin.close(),
    () => tracing.shutdown(),
    () => pool.end(),
    () => ops.close(),
  ]);

  const conn = await connectNats(config.NATS_URL, "steward-gateway", natsAs);
  nc = conn;
  // Until NATS answers, an activation reaches the route guard when its cached set ages out (as a PDP replica's).
  stopActivations = listenForActivations(conn, config.STEWARD_NATS_NAMESPACE, (tenantId) => routePdp.sets.invalidate(tenantId));
  const link = watchNatsLink(conn, logger);
  readiness.add("nats", linkCheck("NATS", link.connected));
  const provision = () => provisionTopology(conn, names, { replicas: config.STEWARD_NATS_REPLICAS });
  await retryUntilUp(provision, { what: "JetStream", logger, signal: stopping.signal });
  // Ready once the streams exist: from then on a new run's copy and command are published by the gateway itself.
  const direct = createDirectPublisher({ pool, nc: conn, logger });
  publisher = direct;
  nats.done();
  link.onReconnect(() => void provision().catch((err) => logger.warn({ error_class: (err as Error)?.name }, "re-provisioning failed")));
  feed.attach(conn);
  const relay = createOutboxRelay({ pool, nc: conn, connectionString: config.DATABASE_URL, logger, link });
  await relay.start();
  stopRelay = async () => {
    publisher = undefined;
    await direct.stop();
    await relay.stop();
  };
  stopPings = answerStatusPings(conn, names.statusPing, { service: "gateway", instance, readiness });
  logger.info("ready");
}

main().catch((err) => {
  process.stderr.write(`gateway failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

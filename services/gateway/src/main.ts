import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { busNames } from "@steward/contract";
import {
  ConfigError,
  answerStatusPings,
  channelCheck,
  commonConfig,
  connectNats,
  createLogger,
  createPool,
  createReadiness,
  env,
  linkCheck,
  onShutdown,
  postgresCheck,
  provisionTopology,
  readConfig,
  retryUntilUp,
  watchNatsLink,
  type NatsConnection,
} from "@steward/platform";
import { createPolicyAdminApi, createPolicyDecisionApi } from "@steward/proto";
import { createOutboxRelay, readBacklog } from "@steward/store";
import { buildApp } from "./adapters/http/app";
import { createAuthenticator } from "./adapters/http/auth";
import { createAuthorizer } from "./app/authorize";
import { createRunHandler } from "./app/create-run";
import { createRunControls } from "./app/control-run";
import { createPlatformStatus } from "./app/platform-status";
import { developmentSecret } from "./dev-secret";
import { createDeferredRunFeed } from "./adapters/nats/run-feed";
import { createBusProbe } from "./adapters/nats/platform-probe";

function readGatewayConfig() {
  const config = readConfig({
    ...commonConfig,
    GATEWAY_PORT: env.port(8080),
    GATEWAY_HOST: env.string("127.0.0.1"),
    POLICY_ADDR: env.hostPort("127.0.0.1:50052"),
    STEWARD_JWT_SECRET: env.secret(32),
    STEWARD_JWKS_URL: env.optional(),
    STEWARD_JWT_ISSUER: env.optional(),
    STEWARD_JWT_AUDIENCE: env.optional(),
    STEWARD_HOME: env.string(join(process.cwd(), ".steward")),
    STEWARD_TEST_DEADLINE_SECONDS: env.int(1, 180, 180),
  });
  if (config.STEWARD_TEST_DEADLINE_SECONDS !== 180 && config.STEWARD_ENV !== "test") {
    throw new ConfigError("STEWARD_TEST_DEADLINE_SECONDS", "may only shorten the deadline when STEWARD_ENV=test");
  }
  const production = config.STEWARD_ENV === "staging" || config.STEWARD_ENV === "production";
  if (production && !config.STEWARD_JWT_SECRET && !config.STEWARD_JWKS_URL) {
    throw new ConfigError("STEWARD_JWT_SECRET", `or STEWARD_JWKS_URL is required when STEWARD_ENV is ${config.STEWARD_ENV}`);
  }
  return config;
}

/**
 * Serves from its first second: runs are accepted whenever PostgreSQL answers (the outbox keeps their
 * commands until NATS does); NATS is joined whenever it answers; /readyz says what is missing.
 */
async function main(): Promise<void> {
  const config = readGatewayConfig();
  const logger = createLogger("gateway", config.LOG_LEVEL);
  const names = busNames(config.STEWARD_NATS_NAMESPACE);
  const instance = `gateway-${randomUUID().slice(0, 8)}`;
  const pool = createPool(config.DATABASE_URL, {
    applicationName: "steward-gateway",
    max: config.PG_POOL_MAX,
    onError: (err) => logger.warn({ code: (err as { code?: string }).code }, "a PostgreSQL connection was lost"),
  });
  const pdp = createPolicyDecisionApi(config.POLICY_ADDR);
  const policyAdmin = createPolicyAdminApi(config.POLICY_ADDR);
  const readiness = createReadiness();
  readiness.add("postgres", postgresCheck(pool));
  readiness.add("policy", channelCheck("the policy decision point", () => pdp.state()));
  const nats = readiness.pending("nats", "connecting to NATS");
  const feed = createDeferredRunFeed(names);
  let nc: NatsConnection | undefined;
  const authenticate = createAuthenticator({
    secret: config.STEWARD_JWKS_URL ? undefined : config.STEWARD_JWT_SECRET ?? developmentSecret(join(config.STEWARD_HOME, "dev-jwt-secret")),
    jwksUrl: config.STEWARD_JWKS_URL,
    issuer: config.STEWARD_JWT_ISSUER,
    audience: config.STEWARD_JWT_AUDIENCE,
  });
  const authorize = createAuthorizer({ pdp, logger });
  const app = buildApp({
    logger,
    pool,
    authenticate,
    authorize,
    policyAdmin,
    controls: createRunControls({ pool, namespace: config.STEWARD_NATS_NAMESPACE }),
    feed,
    createRun: createRunHandler({ pool, namespace: config.STEWARD_NATS_NAMESPACE, deadlineSeconds: config.STEWARD_TEST_DEADLINE_SECONDS }),
    readiness,
    platformStatus: createPlatformStatus({
      gateway: () => readiness.report(),
      backlog: () => readBacklog(pool),
      bus: createBusProbe(() => nc, names),
    }),
  });
  const address = await app.listen({ port: config.GATEWAY_PORT, host: config.GATEWAY_HOST });
  logger.info({ addr: address, health: address }, "listening");

  let stopRelay: (() => Promise<void>) | undefined;
  let stopPings: (() => void) | undefined;
  const stopping = new AbortController();
  onShutdown(logger, [
    async () => stopping.abort(),
    async () => stopPings?.(),
    () => app.close(),
    async () => stopRelay?.(),
    async () => nc?.drain(),
    async () => pdp.close(),
    async () => policyAdmin.close(),
    () => pool.end(),
  ]);

  const conn = await connectNats(config.NATS_URL, "steward-gateway");
  nc = conn;
  const link = watchNatsLink(conn, logger);
  readiness.add("nats", linkCheck("NATS", link.connected));
  nats.done();
  const provision = () => provisionTopology(conn, names, { replicas: config.STEWARD_NATS_REPLICAS });
  await retryUntilUp(provision, { what: "JetStream", logger, signal: stopping.signal });
  link.onReconnect(() => void provision().catch((err) => logger.warn({ error_class: (err as Error)?.name }, "re-provisioning failed")));
  feed.attach(conn);
  const relay = createOutboxRelay({ pool, nc: conn, connectionString: config.DATABASE_URL, logger });
  await relay.start();
  stopRelay = () => relay.stop();
  stopPings = answerStatusPings(conn, names.statusPing, { service: "gateway", instance, readiness });
  logger.info("ready");
}

main().catch((err) => {
  process.stderr.write(`gateway failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

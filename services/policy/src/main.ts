import { randomUUID } from "node:crypto";
import { busNames } from "@steward/contract";
import {
  answerStatusPings,
  bindGrpc,
  commonConfig,
  connectNats,
  createLogger,
  createMetrics,
  createPool,
  createReadiness,
  env,
  grpcServerCredentials,
  grpcTlsConfig,
  healthConfig,
  linkCheck,
  loadGrpcTls,
  natsAuth,
  natsAuthConfig,
  onShutdown,
  postgresCheck,
  readConfig,
  serveHealth,
  shutdownGrpc,
  startTracing,
  testHooks,
  testHooksConfig,
  watchNatsLink,
  watchPools,
  type NatsConnection,
} from "@steward/platform";
import { deferredActivations, defaultPolicyDir } from "@steward/pdp";
import { composePolicyService } from "./compose";

/**
 * Serves decisions as soon as its port is bound: a decision needs PostgreSQL (facts, the decision log), and
 * fails closed while it is away; NATS (activations between replicas) is joined whenever it answers.
 */
async function main(): Promise<void> {
  const config = readConfig({
    DATABASE_URL: commonConfig.DATABASE_URL,
    NATS_URL: commonConfig.NATS_URL,
    STEWARD_NATS_NAMESPACE: commonConfig.STEWARD_NATS_NAMESPACE,
    LOG_LEVEL: commonConfig.LOG_LEVEL,
    PG_POOL_MAX: commonConfig.PG_POOL_MAX,
    STEWARD_ENV: commonConfig.STEWARD_ENV,
    ...testHooksConfig,
    ...grpcTlsConfig,
    ...natsAuthConfig,
    ...healthConfig(8083),
    POLICY_ADDR: env.hostPort("127.0.0.1:50052"),
    STEWARD_POLICY_DIR: env.string(defaultPolicyDir),
    POLICY_CACHE_TENANTS: env.int(1, 1_000_000, 1000),
  });
  testHooks(config, process.env); // the policy service has none, but refuses the switch where it is refused
  const tls = loadGrpcTls(config, "policy");
  const natsAs = natsAuth(config, "policy");
  const logger = createLogger("policy", config.LOG_LEVEL);
  // Each decision is a span (adapters/tracing) when an OTLP endpoint is set; otherwise nothing is started.
  const tracing = startTracing("policy");
  const instance = `policy-${randomUUID().slice(0, 8)}`;
  const readiness = createReadiness();
  const metrics = createMetrics("policy");
  const health = await serveHealth(readiness, { host: config.HEALTH_HOST, port: config.HEALTH_PORT }, { metrics });
  const pool = createPool(config.DATABASE_URL, {
    applicationName: "steward-policy",
    max: config.PG_POOL_MAX,
    onError: (err) => logger.warn({ code: (err as { code?: string }).code }, "a PostgreSQL connection was lost"),
  });
  readiness.add("postgres", postgresCheck(pool));
  watchPools(metrics, { main: pool });
  const activations = deferredActivations(config.STEWARD_NATS_NAMESPACE, () =>
    logger.warn("NATS is not connected: other replicas will see the activation when their cached set ages out"),
  );
  const service = composePolicyService(
    { pool, activations, policyDir: config.STEWARD_POLICY_DIR, logger, metrics },
    { cacheTenants: config.POLICY_CACHE_TENANTS },
  );
  const port = await bindGrpc(service.server, config.POLICY_ADDR, grpcServerCredentials(tls));
  const host = config.POLICY_ADDR.slice(0, config.POLICY_ADDR.lastIndexOf(":"));
  logger.info({ addr: `${host}:${port}`, health: health.url }, "listening");

  let nc: NatsConnection | undefined;
  let stopPings: (() => void) | undefined;
  const nats = readiness.pending("nats", "connecting to NATS");
  onShutdown(logger, [
    async () => stopPings?.(),
    () => shutdownGrpc(service.server),
    async () => service.close(),
    async () => nc?.drain(),
    () => tracing.shutdown(),
    () => pool.end(),
    () => health.close(),
  ]);
  nc = await connectNats(config.NATS_URL, "steward-policy", natsAs);
  const link = watchNatsLink(nc, logger);
  readiness.add("nats", linkCheck("NATS", link.connected));
  nats.done();
  activations.attach(nc);
  stopPings = answerStatusPings(nc, busNames(config.STEWARD_NATS_NAMESPACE).statusPing, { service: "policy", instance, readiness });
  logger.info("ready");
}

main().catch((err) => {
  process.stderr.write(`policy failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

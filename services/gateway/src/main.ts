import { join } from "node:path";
import { busNames } from "@steward/contract";
import {
  ConfigError,
  commonConfig,
  connectNats,
  createLogger,
  createPool,
  env,
  onShutdown,
  provisionTopology,
  readConfig,
} from "@steward/platform";
import { createPolicyAdminApi, createPolicyDecisionApi } from "@steward/proto";
import { createOutboxRelay } from "@steward/store";
import { buildApp } from "./adapters/http/app";
import { createAuthenticator } from "./adapters/http/auth";
import { createAuthorizer } from "./app/authorize";
import { createRunHandler } from "./app/create-run";
import { createRunControls } from "./app/control-run";
import { developmentSecret } from "./dev-secret";
import { createRunFeed } from "./adapters/nats/run-feed";

async function main(): Promise<void> {
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
  const logger = createLogger("gateway", config.LOG_LEVEL);
  const pool = createPool(config.DATABASE_URL, { applicationName: "steward-gateway", max: config.PG_POOL_MAX });
  const nc = await connectNats(config.NATS_URL, "steward-gateway");
  await provisionTopology(nc, busNames(config.STEWARD_NATS_NAMESPACE));
  const relay = createOutboxRelay({ pool, nc, connectionString: config.DATABASE_URL, logger });
  await relay.start();
  const pdp = createPolicyDecisionApi(config.POLICY_ADDR);
  const policyAdmin = createPolicyAdminApi(config.POLICY_ADDR);
  const authenticate = createAuthenticator({
    secret: config.STEWARD_JWKS_URL ? undefined : config.STEWARD_JWT_SECRET ?? developmentSecret(join(config.STEWARD_HOME, "dev-jwt-secret")),
    jwksUrl: config.STEWARD_JWKS_URL,
    issuer: config.STEWARD_JWT_ISSUER,
    audience: config.STEWARD_JWT_AUDIENCE,
  });
  const app = buildApp({
    logger,
    pool,
    authenticate,
    authorize: createAuthorizer({ pdp, logger }),
    policyAdmin,
    controls: createRunControls({ pool, namespace: config.STEWARD_NATS_NAMESPACE }),
    feed: createRunFeed(nc, busNames(config.STEWARD_NATS_NAMESPACE)),
    createRun: createRunHandler({ pool, namespace: config.STEWARD_NATS_NAMESPACE, deadlineSeconds: config.STEWARD_TEST_DEADLINE_SECONDS }),
    ready: async () => {
      await pool.query("SELECT 1");
      return !nc.isClosed();
    },
  });
  const address = await app.listen({ port: config.GATEWAY_PORT, host: config.GATEWAY_HOST });
  logger.info({ addr: address }, "listening");
  onShutdown(logger, [() => app.close(), () => relay.stop(), () => nc.drain(), async () => pdp.close(), async () => policyAdmin.close(), () => pool.end()]);
}

main().catch((err) => {
  process.stderr.write(`gateway failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

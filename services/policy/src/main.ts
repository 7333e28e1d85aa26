import {
  bindGrpc,
  commonConfig,
  connectNats,
  createLogger,
  createPool,
  env,
  onShutdown,
  readConfig,
  shutdownGrpc,
} from "@steward/platform";
import { composePolicyService, defaultPolicyDir } from "./app/compose";

async function main(): Promise<void> {
  const config = readConfig({
    DATABASE_URL: commonConfig.DATABASE_URL,
    NATS_URL: commonConfig.NATS_URL,
    STEWARD_NATS_NAMESPACE: commonConfig.STEWARD_NATS_NAMESPACE,
    LOG_LEVEL: commonConfig.LOG_LEVEL,
    PG_POOL_MAX: commonConfig.PG_POOL_MAX,
    POLICY_ADDR: env.hostPort("127.0.0.1:50052"),
    STEWARD_POLICY_DIR: env.string(defaultPolicyDir),
  });
  const logger = createLogger("policy", config.LOG_LEVEL);
  const pool = createPool(config.DATABASE_URL, { applicationName: "steward-policy", max: config.PG_POOL_MAX });
  const nc = await connectNats(config.NATS_URL, "steward-policy");
  const service = composePolicyService({ pool, nc, namespace: config.STEWARD_NATS_NAMESPACE, policyDir: config.STEWARD_POLICY_DIR, logger });
  const port = await bindGrpc(service.server, config.POLICY_ADDR);
  const host = config.POLICY_ADDR.slice(0, config.POLICY_ADDR.lastIndexOf(":"));
  logger.info({ addr: `${host}:${port}` }, "listening");
  onShutdown(logger, [() => shutdownGrpc(service.server), async () => service.close(), () => nc.drain(), () => pool.end()]);
}

main().catch((err) => {
  process.stderr.write(`policy failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

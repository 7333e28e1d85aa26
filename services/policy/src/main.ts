import { bindGrpc, commonConfig, createLogger, createPool, env, onShutdown, readConfig, shutdownGrpc } from "@steward/platform";
import { createPgPolicyFacts } from "./adapters/pg/facts";
import { createPolicyGrpcServer } from "./adapters/grpc/server";
import { createDecisionHandler } from "./app/decide-request";

async function main(): Promise<void> {
  const config = readConfig({
    DATABASE_URL: commonConfig.DATABASE_URL,
    LOG_LEVEL: commonConfig.LOG_LEVEL,
    POLICY_ADDR: env.hostPort("127.0.0.1:50052"),
  });
  const logger = createLogger("policy", config.LOG_LEVEL);
  const pool = createPool(config.DATABASE_URL, { applicationName: "steward-policy" });
  const handle = createDecisionHandler({ facts: createPgPolicyFacts(pool), logger });
  const server = createPolicyGrpcServer({ handle, logger });
  const port = await bindGrpc(server, config.POLICY_ADDR);
  const host = config.POLICY_ADDR.slice(0, config.POLICY_ADDR.lastIndexOf(":"));
  logger.info({ addr: `${host}:${port}` }, "listening");
  onShutdown(logger, [() => shutdownGrpc(server), () => pool.end()]);
}

main().catch((err) => {
  process.stderr.write(`policy failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

import { bindGrpc, commonConfig, createLogger, createPool, env, onShutdown, readConfig, shutdownGrpc } from "@steward/platform";
import { createPolicyDecisionApi } from "@steward/proto";
import { createToolRegistry } from "./domain/registry";
import { knowledgeSearchTool } from "./adapters/tools/knowledge-search";
import { testTools } from "./adapters/tools/test-tools";
import { createPgIdempotencyStore } from "./adapters/pg/idempotency-store";
import { createToolExecGrpcServer } from "./adapters/grpc/server";
import { createInvokeHandler } from "./app/invoke-tool";

async function main(): Promise<void> {
  const config = readConfig({
    DATABASE_URL: commonConfig.DATABASE_URL,
    LOG_LEVEL: commonConfig.LOG_LEVEL,
    PG_POOL_MAX: commonConfig.PG_POOL_MAX,
    STEWARD_ENV: commonConfig.STEWARD_ENV,
    TOOL_EXEC_ADDR: env.hostPort("127.0.0.1:50051"),
    POLICY_ADDR: env.hostPort("127.0.0.1:50052"),
  });
  const logger = createLogger("tool-exec", config.LOG_LEVEL);
  const pool = createPool(config.DATABASE_URL, { applicationName: "steward-tool-exec", max: config.PG_POOL_MAX });
  const registry = createToolRegistry([
    knowledgeSearchTool(pool),
    ...(config.STEWARD_ENV === "test" ? await testTools(pool) : []),
  ]);
  const pdp = createPolicyDecisionApi(config.POLICY_ADDR);
  const invoke = createInvokeHandler({ registry, pdp, results: createPgIdempotencyStore(pool), logger });
  const server = createToolExecGrpcServer({ registry, invoke, logger });
  const port = await bindGrpc(server, config.TOOL_EXEC_ADDR);
  const host = config.TOOL_EXEC_ADDR.slice(0, config.TOOL_EXEC_ADDR.lastIndexOf(":"));
  logger.info({ addr: `${host}:${port}`, tools: registry.list().map((t) => t.name) }, "listening");
  onShutdown(logger, [() => shutdownGrpc(server), async () => pdp.close(), () => pool.end()]);
}

main().catch((err) => {
  process.stderr.write(`tool-exec failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

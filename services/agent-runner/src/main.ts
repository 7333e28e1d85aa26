import { randomUUID } from "node:crypto";
import { busNames } from "@steward/contract";
import {
  commonConfig,
  connectNats,
  createLogger,
  createPool,
  env,
  onShutdown,
  provisionTopology,
  readConfig,
} from "@steward/platform";
import { createToolExecApi } from "@steward/proto";
import { createOutboxRelay } from "@steward/store";
import { selectProvider } from "./adapters/llm/select-provider";
import { startRunConsumer } from "./adapters/nats/consumer";
import { createRunRequestedHandler } from "./app/handle-run-requested";

async function main(): Promise<void> {
  const config = readConfig({
    ...commonConfig,
    TOOL_EXEC_ADDR: env.hostPort("127.0.0.1:50051"),
    RUNNER_CONCURRENCY: env.int(1, 1000, 32),
    RUNNER_ID: env.string(`runner-${randomUUID().slice(0, 8)}`),
    LLM_BASE_URL: env.optional(),
    LLM_API_KEY: env.optional(),
    LLM_MODEL: env.optional(),
    LLM_FALLBACK_BASE_URL: env.optional(),
    LLM_FALLBACK_API_KEY: env.optional(),
    LLM_FALLBACK_MODEL: env.optional(),
  });
  const logger = createLogger("agent-runner", config.LOG_LEVEL);
  const provider = selectProvider(config);
  if (provider.name === "scripted") logger.info("no LLM endpoint configured: using the scripted demo model");
  const names = busNames(config.STEWARD_NATS_NAMESPACE);
  const pool = createPool(config.DATABASE_URL, { applicationName: "steward-agent-runner", max: 20 });
  const nc = await connectNats(config.NATS_URL, `steward-agent-runner-${config.RUNNER_ID}`);
  await provisionTopology(nc, names);
  const toolExec = createToolExecApi(config.TOOL_EXEC_ADDR);
  const { tools } = await toolExec.listTools({ deadlineMs: 30_000, waitForReady: true });
  const relay = createOutboxRelay({ pool, nc, connectionString: config.DATABASE_URL, logger });
  await relay.start();
  const handle = createRunRequestedHandler({
    pool,
    toolExec,
    provider,
    tools,
    logger,
    namespace: config.STEWARD_NATS_NAMESPACE,
    runnerId: config.RUNNER_ID,
    maxOutputTokens: 4096,
  });
  const consumer = await startRunConsumer({ nc, names, handle, logger }, { concurrency: config.RUNNER_CONCURRENCY });
  logger.info({ runner_id: config.RUNNER_ID, provider: provider.name, tools: tools.map((t) => t.name) }, "ready");
  onShutdown(logger, [() => consumer.stop(), () => relay.stop(), () => nc.drain(), async () => toolExec.close(), () => pool.end()]);
}

main().catch((err) => {
  process.stderr.write(`agent-runner failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

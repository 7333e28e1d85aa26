import { randomUUID } from "node:crypto";
import { busNames } from "@steward/contract";
import {
  ConfigError,
  commonConfig,
  connectNats,
  createLogger,
  createPool,
  env,
  onShutdown,
  provisionRunnerConsumer,
  provisionTopology,
  readConfig,
} from "@steward/platform";
import { createToolExecApi } from "@steward/proto";
import { createOutboxRelay } from "@steward/store";
import { withToolExecBreaker } from "./adapters/grpc/guarded-tool-exec";
import { selectProvider } from "./adapters/llm/select-provider";
import { cancelWatcher } from "./adapters/nats/cancel-watch";
import { startRunConsumer } from "./adapters/nats/consumer";
import { crashPointNames, killAt, noCrashPoints } from "./app/crash-points";
import { createRunRequestedHandler } from "./app/handle-run-requested";
import { createReaper } from "./app/reaper";

async function main(): Promise<void> {
  const config = readConfig({
    ...commonConfig,
    TOOL_EXEC_ADDR: env.hostPort("127.0.0.1:50051"),
    RUNNER_CONCURRENCY: env.int(1, 1000, 32),
    RUNNER_ID: env.string(`runner-${randomUUID().slice(0, 8)}`),
    RUNNER_LEASE_MS: env.int(500, 600_000, 30_000),
    RUNNER_ACK_WAIT_MS: env.int(500, 600_000, 30_000),
    RUNNER_MAX_DELIVER: env.int(1, 100, 5),
    RUNNER_RETRY_BACKOFF_MS: env.int(1, 60_000, 1000),
    RUNNER_REAPER_INTERVAL_MS: env.int(100, 3_600_000, 60_000),
    RUNNER_REDRIVE_AFTER_MS: env.int(100, 3_600_000, 30_000),
    STEWARD_TEST_ASK_WAIT_SECONDS: env.int(1, 300, 300),
    STEWARD_TEST_CRASH_AT: env.optional(),
    LLM_BASE_URL: env.optional(),
    LLM_API_KEY: env.optional(),
    LLM_MODEL: env.optional(),
    LLM_FALLBACK_BASE_URL: env.optional(),
    LLM_FALLBACK_API_KEY: env.optional(),
    LLM_FALLBACK_MODEL: env.optional(),
    LLM_MAX_OUTPUT_TOKENS: env.int(1, 1_000_000, 0),
    LLM_CONTEXT_TOKENS: env.int(0, 10_000_000, 0),
  });
  const crashAt = config.STEWARD_TEST_CRASH_AT;
  if (crashAt && (config.STEWARD_ENV !== "test" || !(crashPointNames as readonly string[]).includes(crashAt))) {
    throw new ConfigError("STEWARD_TEST_CRASH_AT", `is only for STEWARD_ENV=test and must be one of ${crashPointNames.join(", ")}`);
  }
  if (config.STEWARD_TEST_ASK_WAIT_SECONDS !== 300 && config.STEWARD_ENV !== "test") {
    throw new ConfigError("STEWARD_TEST_ASK_WAIT_SECONDS", "may only shorten the wait when STEWARD_ENV=test");
  }
  const logger = createLogger("agent-runner", config.LOG_LEVEL);
  const provider = selectProvider(config);
  if (provider.name === "scripted") logger.info("no LLM endpoint configured: using the scripted demo model");
  const names = busNames(config.STEWARD_NATS_NAMESPACE);
  const pool = createPool(config.DATABASE_URL, { applicationName: "steward-agent-runner", max: config.PG_POOL_MAX });
  const nc = await connectNats(config.NATS_URL, `steward-agent-runner-${config.RUNNER_ID}`);
  await provisionTopology(nc, names);
  await provisionRunnerConsumer(nc, names, { ackWaitMs: config.RUNNER_ACK_WAIT_MS, maxDeliver: config.RUNNER_MAX_DELIVER });
  const toolExec = withToolExecBreaker(createToolExecApi(config.TOOL_EXEC_ADDR));
  const { tools } = await toolExec.listTools({ deadlineMs: 30_000, waitForReady: true });
  const relay = createOutboxRelay({ pool, nc, connectionString: config.DATABASE_URL, logger });
  await relay.start();
  const reaper = createReaper(
    { pool, namespace: config.STEWARD_NATS_NAMESPACE, logger },
    {
      intervalMs: config.RUNNER_REAPER_INTERVAL_MS,
      redriveAfterMs: config.RUNNER_REDRIVE_AFTER_MS,
      askWaitSeconds: config.STEWARD_TEST_ASK_WAIT_SECONDS,
    },
  );
  reaper.start();
  const handle = createRunRequestedHandler(
    {
      pool,
      toolExec,
      provider,
      tools,
      logger,
      namespace: config.STEWARD_NATS_NAMESPACE,
      runnerId: config.RUNNER_ID,
      model: {
        name: config.LLM_MODEL,
        maxOutputTokens: config.LLM_MAX_OUTPUT_TOKENS || undefined,
        contextTokens: config.LLM_CONTEXT_TOKENS || undefined,
      },
      watchCancel: cancelWatcher(nc, names),
      publishDelta: (runId, delta) => nc.publish(names.runDeltas(runId), JSON.stringify(delta)),
      crash: crashAt ? killAt(crashAt as (typeof crashPointNames)[number]) : noCrashPoints,
    },
    { leaseMs: config.RUNNER_LEASE_MS, retryBackoffMs: config.RUNNER_RETRY_BACKOFF_MS },
  );
  const consumer = await startRunConsumer({ nc, names, handle, logger }, { concurrency: config.RUNNER_CONCURRENCY });
  logger.info({ runner_id: config.RUNNER_ID, provider: provider.name, tools: tools.map((t) => t.name) }, "ready");
  onShutdown(logger, [
    () => consumer.stop(),
    () => reaper.stop(),
    () => relay.stop(),
    () => nc.drain(),
    async () => toolExec.close(),
    () => pool.end(),
  ]);
}

main().catch((err) => {
  process.stderr.write(`agent-runner failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
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
  down,
  env,
  healthConfig,
  linkCheck,
  onShutdown,
  postgresCheck,
  provisionRunnerConsumer,
  provisionTopology,
  readConfig,
  retryUntilUp,
  serveHealth,
  up,
  watchNatsLink,
} from "@steward/platform";
import { createToolExecApi } from "@steward/proto";
import { createOutboxRelay } from "@steward/store";
import { withToolExecBreaker } from "./adapters/grpc/guarded-tool-exec";
import { withPatience } from "./adapters/grpc/patient-tool-exec";
import { selectProvider } from "./adapters/llm/select-provider";
import { cancelWatcher } from "./adapters/nats/cancel-watch";
import { startRunConsumer, type RunConsumer } from "./adapters/nats/consumer";
import { crashPointNames, killAt, noCrashPoints } from "./app/crash-points";
import { createRunRequestedHandler } from "./app/handle-run-requested";
import { createLeaseKeeper } from "./app/lease-keeper";
import { createReaper } from "./app/reaper";

function readRunnerConfig() {
  const config = readConfig({
    ...commonConfig,
    ...healthConfig(8081),
    TOOL_EXEC_ADDR: env.hostPort("127.0.0.1:50051"),
    RUNNER_CONCURRENCY: env.int(1, 1000, 32),
    RUNNER_ID: env.string(`runner-${randomUUID().slice(0, 8)}`),
    RUNNER_LEASE_MS: env.int(500, 600_000, 2000),
    RUNNER_ACK_WAIT_MS: env.int(500, 600_000, 2500),
    RUNNER_MAX_DELIVER: env.int(1, 100, 5),
    RUNNER_RETRY_BACKOFF_MS: env.int(1, 60_000, 1000),
    RUNNER_REAPER_INTERVAL_MS: env.int(100, 3_600_000, 60_000),
    RUNNER_REDRIVE_AFTER_MS: env.int(100, 3_600_000, 30_000),
    RUNNER_REDRIVE_INTERVAL_MS: env.int(100, 3_600_000, 5000),
    /** How long a tool call that provably did nothing (PDP, database or tool-exec away) is tried again. */
    RUNNER_TOOL_RETRY_MS: env.int(0, 600_000, 60_000),
    STEWARD_TEST_ASK_WAIT_SECONDS: env.int(1, 300, 300),
    STEWARD_TEST_CRASH_AT: env.optional(),
    LLM_BASE_URL: env.optionalUrl(["http", "https"]),
    LLM_API_KEY: env.optional(),
    LLM_MODEL: env.optional(),
    LLM_FALLBACK_BASE_URL: env.optionalUrl(["http", "https"]),
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
  if (config.RUNNER_ACK_WAIT_MS < config.RUNNER_LEASE_MS) {
    // Redelivered before the lease lapsed, a command would only bounce off the live claim.
    throw new ConfigError("RUNNER_ACK_WAIT_MS", "must not be shorter than RUNNER_LEASE_MS");
  }
  return config;
}

/**
 * Starts in any order: the health port first, then PostgreSQL, NATS and tool-exec are waited for (with
 * backoff, saying what is missing on /readyz), and only then are runs pulled. A dependency lost later is
 * reconnected to; nothing but a bad configuration stops the process.
 */
async function main(): Promise<void> {
  const config = readRunnerConfig();
  const logger = createLogger("agent-runner", config.LOG_LEVEL);
  const provider = selectProvider(config);
  if (provider.name === "scripted") logger.info("no LLM endpoint configured: using the scripted demo model");
  const names = busNames(config.STEWARD_NATS_NAMESPACE);
  const readiness = createReadiness();
  const starting = readiness.pending("start", "connecting to NATS, JetStream and tool-exec");
  const health = await serveHealth(readiness, { host: config.HEALTH_HOST, port: config.HEALTH_PORT });
  logger.info({ health: health.url, runner_id: config.RUNNER_ID }, "listening");

  const shutdown = new AbortController();
  // Every run in hand listens for shutdown (and removes its listener when done): up to RUNNER_CONCURRENCY
  // listeners, plus a PostgreSQL wait each, are expected, not a leak.
  setMaxListeners(2 * config.RUNNER_CONCURRENCY + 10, shutdown.signal);
  let consumer: RunConsumer | undefined;
  let stopRelay: (() => Promise<void>) | undefined;
  let stopReaper: (() => Promise<void>) | undefined;
  let stopPings: (() => void) | undefined;
  const leases = { stop: () => undefined as void };
  const pool = createPool(config.DATABASE_URL, {
    applicationName: "steward-agent-runner",
    max: config.PG_POOL_MAX,
    onError: (err) => logger.warn({ code: (err as { code?: string }).code }, "a PostgreSQL connection was lost"),
  });
  readiness.add("postgres", postgresCheck(pool));
  // Outermost, patience: it must see the breaker's fast refusals as "nothing ran" and wait them out.
  const toolExec = withPatience(withToolExecBreaker(createToolExecApi(config.TOOL_EXEC_ADDR), { resetTimeoutMs: 2000 }), {
    waitMs: config.RUNNER_TOOL_RETRY_MS,
  });
  readiness.add("tool-exec", channelCheck("tool-exec", () => toolExec.state()));
  let ncRef: Awaited<ReturnType<typeof connectNats>> | undefined;
  // Hand back what is in hand (nak, no delay), flush the outbox, close the pools: within 10 s.
  onShutdown(logger, [
    async () => shutdown.abort(),
    async () => stopPings?.(),
    async () => consumer?.stop(),
    async () => leases.stop(),
    async () => stopReaper?.(),
    async () => stopRelay?.(),
    async () => ncRef?.drain(),
    async () => toolExec.close(),
    () => pool.end(),
    () => health.close(),
  ]);

  const nc = await connectNats(config.NATS_URL, `steward-agent-runner-${config.RUNNER_ID}`);
  ncRef = nc;
  const link = watchNatsLink(nc, logger);
  readiness.add("nats", linkCheck("NATS", link.connected));
  const provision = async () => {
    await provisionTopology(nc, names, { replicas: config.STEWARD_NATS_REPLICAS });
    await provisionRunnerConsumer(nc, names, { ackWaitMs: config.RUNNER_ACK_WAIT_MS, maxDeliver: config.RUNNER_MAX_DELIVER });
  };
  await retryUntilUp(provision, { what: "JetStream", logger, signal: shutdown.signal });
  // A server that came back without its store has lost the streams: make them again.
  link.onReconnect(() => void provision().catch((err) => logger.warn({ error_class: (err as Error)?.name }, "re-provisioning failed")));
  const { tools } = await retryUntilUp(() => toolExec.listTools({ deadlineMs: 5000, waitForReady: true }), {
    what: "tool-exec",
    logger,
    signal: shutdown.signal,
  });

  const relay = createOutboxRelay({ pool, nc, connectionString: config.DATABASE_URL, logger });
  await relay.start();
  stopRelay = () => relay.stop();
  const reaper = createReaper(
    { pool, namespace: config.STEWARD_NATS_NAMESPACE, logger },
    {
      intervalMs: config.RUNNER_REAPER_INTERVAL_MS,
      redriveAfterMs: config.RUNNER_REDRIVE_AFTER_MS,
      redriveIntervalMs: config.RUNNER_REDRIVE_INTERVAL_MS,
      askWaitSeconds: config.STEWARD_TEST_ASK_WAIT_SECONDS,
    },
  );
  reaper.start();
  stopReaper = () => reaper.stop();
  const keeper = createLeaseKeeper({ pool, runnerId: config.RUNNER_ID, logger }, { leaseMs: config.RUNNER_LEASE_MS });
  leases.stop = () => keeper.stop();
  const crashAt = config.STEWARD_TEST_CRASH_AT;
  const handle = createRunRequestedHandler(
    {
      pool,
      toolExec,
      provider,
      tools,
      logger,
      leases: keeper,
      shutdown: shutdown.signal,
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
  if (shutdown.signal.aborted) return;
  const running = await startRunConsumer({ nc, names, handle, logger, reprovision: provision }, { concurrency: config.RUNNER_CONCURRENCY });
  consumer = running;
  readiness.add("consumer", () => (running.attached() ? up : down("not attached to the runners' consumer")));
  stopPings = answerStatusPings(nc, names.statusPing, {
    service: "agent-runner",
    instance: config.RUNNER_ID,
    readiness,
    more: () => ({ in_flight: running.inFlight(), concurrency: config.RUNNER_CONCURRENCY }),
  });
  starting.done();
  logger.info({ runner_id: config.RUNNER_ID, provider: provider.name, tools: tools.map((t) => t.name) }, "ready");
}

main().catch((err) => {
  process.stderr.write(`agent-runner failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

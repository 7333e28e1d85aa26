import { setMaxListeners } from "node:events";
import { busNames } from "@steward/contract";
import {
  answerStatusPings,
  breakerGauge,
  channelCheck,
  connectNats,
  createLogger,
  createMetrics,
  createPool,
  createReadiness,
  down,
  grpcClientOptions,
  linkCheck,
  loadGrpcTls,
  natsAuth,
  onShutdown,
  postgresCheck,
  provisionRunnerConsumer,
  provisionTopology,
  retryUntilUp,
  serveHealth,
  startTracing,
  up,
  watchNatsLink,
  watchPools,
} from "@steward/platform";
import { createToolExecApi } from "@steward/proto";
import { createDirectPublisher, createOutboxRelay, createRunAppender, createRunStreams } from "@steward/store";
import { withToolExecBreaker } from "./adapters/grpc/guarded-tool-exec";
import { toolExecPort } from "./adapters/grpc/tool-exec-port";
import { withPatience } from "./adapters/grpc/patient-tool-exec";
import { modelsOf, selectProvider } from "./adapters/llm/select-provider";
import { watchRunnerConsumer } from "./adapters/metrics/consumer-gauges";
import { countRedeliveries } from "./adapters/metrics/delivery-metrics";
import { watchOutbox } from "./adapters/metrics/outbox-gauges";
import { runMetrics } from "./adapters/metrics/run-metrics";
import { timedProvider } from "./adapters/metrics/timed-provider";
import { timedToolExec } from "./adapters/metrics/timed-tool-exec";
import { tracedHandler } from "./adapters/tracing/traced-handler";
import { tracedProvider } from "./adapters/tracing/traced-provider";
import { tracedToolExec } from "./adapters/tracing/traced-tool-exec";
import { cancelWatcher } from "./adapters/nats/cancel-watch";
import { startRunConsumer, type RunConsumer } from "./adapters/nats/consumer";
import { killAt, noCrashPoints } from "./app/crash-points";
import { createRunRequestedHandler } from "./app/handle-run-requested";
import { createLeaseKeeper } from "./app/lease-keeper";
import { createReaper } from "./app/reaper";
import { readRunnerConfig } from "./config";

/**
 * Starts in any order: the health port first, then PostgreSQL, NATS and tool-exec are waited for (with
 * backoff, saying what is missing on /readyz), and only then are runs pulled. A dependency lost later is
 * reconnected to; nothing but a bad configuration stops the process.
 */
async function main(): Promise<void> {
  const config = readRunnerConfig();
  const tls = loadGrpcTls(config, "agent-runner");
  const natsAs = natsAuth(config, "agent-runner");
  const logger = createLogger("agent-runner", config.LOG_LEVEL);
  // Spans are wrapped around the same parts as the metrics; without an OTLP endpoint they are no-ops.
  const tracing = startTracing("agent-runner");
  // Metrics are wrapped around the parts here, at the composition root; /metrics is on the health port.
  const metrics = createMetrics("agent-runner");
  const breakerState = breakerGauge(metrics);
  const observer = runMetrics(metrics);
  const provider = tracedProvider(timedProvider(selectProvider(config, breakerState), metrics), {
    ...modelsOf(config),
    scripted: "scripted",
  });
  if (provider.name === "scripted") logger.info("no LLM endpoint configured: using the scripted demo model");
  const names = busNames(config.STEWARD_NATS_NAMESPACE);
  const readiness = createReadiness();
  const starting = readiness.pending("start", "connecting to NATS, JetStream and tool-exec");
  const health = await serveHealth(readiness, { host: config.HEALTH_HOST, port: config.HEALTH_PORT }, { metrics });
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
  watchPools(metrics, { main: pool });
  watchOutbox(pool, metrics);
  // Outermost, patience: it must see the breaker's fast refusals as "nothing ran" and wait them out. The timing
  // wraps it all: a tool call's latency as the loop lives it. Tool names are known once tool-exec lists them.
  const toolNames = new Set<string>();
  const guarded = withToolExecBreaker(createToolExecApi(config.TOOL_EXEC_ADDR, grpcClientOptions(tls, "tool-exec")), {
    resetTimeoutMs: 2000,
    onState: (state) => breakerState("tool-exec", state),
  });
  const toolExec = tracedToolExec(timedToolExec(withPatience(guarded, { waitMs: config.RUNNER_TOOL_RETRY_MS }), metrics, toolNames), toolNames);
  readiness.add(
    "tool-exec",
    channelCheck("tool-exec", () => toolExec.state()),
  );
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
    () => tracing.shutdown(),
    () => pool.end(),
    () => health.close(),
  ]);

  const nc = await connectNats(config.NATS_URL, `steward-agent-runner-${config.RUNNER_ID}`, natsAs);
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
  for (const tool of tools) toolNames.add(tool.name);
  watchRunnerConsumer({ nc, names }, metrics);

  // Event copies only: commands (a re-drive's included) are the gateway's to publish (its NATS user may, this one
  // may not), so they wait in the outbox for its relay.
  const relay = createOutboxRelay({ pool, nc, connectionString: config.DATABASE_URL, logger, link }, { subjectPrefixes: [names.allEvents.replace(/>$/, "")] });
  await relay.start();
  // The loop's own appends go onto the bus straight after their commit; the relay sweeps what they miss.
  const publisher = createDirectPublisher({ pool, nc, logger });
  stopRelay = async () => {
    await publisher.stop();
    await relay.stop();
  };
  const reaper = createReaper(
    // Its appends are published by the relays: it writes to runs whose writer may be publishing their events.
    { pool, namespace: config.STEWARD_NATS_NAMESPACE, logger, observer, streams: createRunStreams({ pool, namespace: config.STEWARD_NATS_NAMESPACE }) },
    {
      intervalMs: config.RUNNER_REAPER_INTERVAL_MS,
      redriveAfterMs: config.RUNNER_REDRIVE_AFTER_MS,
      redriveIntervalMs: config.RUNNER_REDRIVE_INTERVAL_MS,
      askWaitSeconds: config.STEWARD_TEST_ASK_WAIT_SECONDS,
      tenantMaxRunning: config.RUNNER_TENANT_MAX_RUNNING || undefined,
    },
  );
  reaper.start();
  stopReaper = () => reaper.stop();
  const keeper = createLeaseKeeper({ pool, runnerId: config.RUNNER_ID, logger }, { leaseMs: config.RUNNER_LEASE_MS });
  leases.stop = () => keeper.stop();
  const handle = createRunRequestedHandler(
    {
      pool,
      toolExec: toolExecPort(toolExec),
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
      streams: createRunStreams({
        pool,
        namespace: config.STEWARD_NATS_NAMESPACE,
        publisher,
        appender: config.RUNNER_APPENDS_TOGETHER ? createRunAppender(pool) : undefined,
      }),
      publishDelta: (runId, delta) => nc.publish(names.runDeltas(runId), JSON.stringify(delta)),
      crash: config.crashAt ? killAt(config.crashAt) : noCrashPoints,
      observer,
    },
    {
      leaseMs: config.RUNNER_LEASE_MS,
      retryBackoffMs: config.RUNNER_RETRY_BACKOFF_MS,
      tenantMaxRunning: config.RUNNER_TENANT_MAX_RUNNING || undefined,
    },
  );
  if (shutdown.signal.aborted) return;
  const running = await startRunConsumer(
    {
      nc,
      names,
      handle: countRedeliveries(tracedHandler(handle, { subject: names.runRequested, consumer: names.runnerConsumer }), metrics),
      logger,
      reprovision: provision,
    },
    { concurrency: config.RUNNER_CONCURRENCY },
  );
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

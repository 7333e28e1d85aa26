import {
  bindGrpc,
  channelCheck,
  commonConfig,
  createLogger,
  createMetrics,
  createPool,
  createReadiness,
  env,
  grpcClientOptions,
  grpcServerCredentials,
  grpcTlsConfig,
  healthConfig,
  loadGrpcTls,
  onShutdown,
  postgresCheck,
  readConfig,
  retryUntilUp,
  serveHealth,
  shutdownGrpc,
  startTracing,
  testHooks,
  testHooksConfig,
  watchPools,
} from "@steward/platform";
import { createPolicyDecisionApi } from "@steward/proto";
import { parseDatasetTenants } from "@steward/store";
import { createToolRegistry } from "./domain/registry";
import { knowledgeSearchTool } from "./adapters/tools/knowledge-search";
import { testTools } from "./adapters/tools/test-tools";
import { datasetTools } from "./adapters/tools/dataset-tools";
import { saveNoteTool } from "./adapters/tools/save-note";
import { proposeKnowledgeTool } from "./adapters/tools/propose-knowledge";
import { parseDatasets, unservedDatasets } from "./adapters/tools/dataset/catalog";
import { createDatasetReaders } from "./adapters/tools/dataset/readers";
import { createPgDatasetAccess } from "./adapters/tools/dataset/access";
import { parseMcpServers } from "./adapters/mcp/config";
import { mountMcpServers } from "./adapters/mcp/mount";
import { createPgIdempotencyStore } from "./adapters/pg/idempotency-store";
import { createDeferredToolExecServer } from "./adapters/grpc/server";
import { createInvokeHandler } from "./app/invoke-tool";
import { requireRunOwner } from "./app/run-owner";
import { createPgRunOwners } from "./adapters/pg/run-owners";
import { withInvokeMetrics } from "./adapters/metrics/invoke-metrics";
import { withPdpMetrics } from "./adapters/metrics/pdp-metrics";
import { tracedInvoke } from "./adapters/tracing/traced-invoke";
import { tracedPdp } from "./adapters/tracing/traced-pdp";

/**
 * Binds its port at once and answers UNAVAILABLE until its tools are ready (PostgreSQL reached, MCP servers
 * mounted); the PDP is asked per call, and a call while it is away is denied (fail closed).
 */
async function main(): Promise<void> {
  const config = readConfig({
    DATABASE_URL: commonConfig.DATABASE_URL,
    LOG_LEVEL: commonConfig.LOG_LEVEL,
    PG_POOL_MAX: commonConfig.PG_POOL_MAX,
    STEWARD_ENV: commonConfig.STEWARD_ENV,
    ...testHooksConfig,
    ...grpcTlsConfig,
    ...healthConfig(8082),
    TOOL_EXEC_ADDR: env.hostPort("127.0.0.1:50051"),
    POLICY_ADDR: env.hostPort("127.0.0.1:50052"),
    // The datasets tool-exec can read, by name (docs/datasets.md); or one, by the three variables after it.
    DATASETS: env.optional(),
    DATASET_URL: env.optionalUrl(["postgres", "postgresql"]),
    DATASET_NAME: env.optional(),
    DATASET_SCHEMA: env.optional(),
    DATASET_ROW_LIMIT: env.int(1, 100_000, 200),
    DATASET_STATEMENT_TIMEOUT_MS: env.int(10, 600_000, 5000),
    // Which tenants may have each dataset (docs/datasets.md); unset: none.
    DATASET_TENANTS: parseDatasetTenants,
    MCP_SERVERS: env.optional(),
  });
  // The test tools are a test hook: STEWARD_TEST_HOOKS=1 with STEWARD_ENV=test, never STEWARD_ENV=test alone.
  const hooks = testHooks(config, process.env);
  const tls = loadGrpcTls(config, "tool-exec");
  const mcpServers = parseMcpServers(config.MCP_SERVERS);
  // Where each dataset lives; which tenants may have it is the operator's list, and which members may use it each
  // tenant's grant. By default one dataset, "demo", in the datasets database beside the application's, read as
  // steward_reader.
  const datasets = parseDatasets(config, config.DATABASE_URL);
  const logger = createLogger("tool-exec", config.LOG_LEVEL);
  if (config.DATASET_TENANTS.datasets.length === 0) logger.warn("DATASET_TENANTS lists no dataset: no tenant may use one (docs/datasets.md)");
  const unserved = unservedDatasets(config.DATASET_TENANTS, datasets);
  if (unserved.length > 0) logger.warn({ datasets: unserved }, "DATASET_TENANTS lists datasets this tool-exec does not serve (DATASETS)");
  // Spans are wrapped around the same parts as the metrics; without an OTLP endpoint they are no-ops.
  const tracing = startTracing("tool-exec");
  const readiness = createReadiness();
  const starting = readiness.pending("start", "waiting for PostgreSQL and the tools");
  const metrics = createMetrics("tool-exec");
  const health = await serveHealth(readiness, { host: config.HEALTH_HOST, port: config.HEALTH_PORT }, { metrics });
  const onError = (err: Error) => logger.warn({ code: (err as { code?: string }).code }, "a PostgreSQL connection was lost");
  const dataset = createDatasetReaders(datasets, { rowLimit: config.DATASET_ROW_LIMIT, timeoutMs: config.DATASET_STATEMENT_TIMEOUT_MS });
  const pool = createPool(config.DATABASE_URL, { applicationName: "steward-tool-exec", max: config.PG_POOL_MAX, onError });
  // The idempotency locks get their own pool: a held lock must never wait for a client a tool needs.
  const lockPool = createPool(config.DATABASE_URL, { applicationName: "steward-tool-exec-locks", max: config.PG_POOL_MAX, onError });
  readiness.add("postgres", postgresCheck(pool));
  watchPools(metrics, { main: pool, locks: lockPool });
  const pdp = tracedPdp(withPdpMetrics(createPolicyDecisionApi(config.POLICY_ADDR, grpcClientOptions(tls, "policy")), metrics));
  readiness.add(
    "policy",
    channelCheck("the policy decision point", () => pdp.state()),
  );
  const deferred = createDeferredToolExecServer(logger);
  const port = await bindGrpc(deferred.server, config.TOOL_EXEC_ADDR, grpcServerCredentials(tls));
  const host = config.TOOL_EXEC_ADDR.slice(0, config.TOOL_EXEC_ADDR.lastIndexOf(":"));
  logger.info({ addr: `${host}:${port}`, health: health.url }, "listening");
  const stopping = new AbortController();
  let closeMcp: () => Promise<void> = async () => undefined;
  onShutdown(logger, [
    async () => stopping.abort(),
    () => shutdownGrpc(deferred.server),
    async () => pdp.close(),
    () => closeMcp(),
    () => dataset.close(),
    () => tracing.shutdown(),
    () => lockPool.end(),
    () => pool.end(),
    () => health.close(),
  ]);

  const mcp = await mountMcpServers(mcpServers, logger);
  closeMcp = () => mcp.close();
  const extra = hooks ? await retryUntilUp(() => testTools(pool), { what: "PostgreSQL", logger, signal: stopping.signal }) : [];
  const registry = createToolRegistry([
    knowledgeSearchTool(pool),
    saveNoteTool(pool),
    proposeKnowledgeTool(pool),
    ...datasetTools({ access: createPgDatasetAccess(pool, config.DATASET_TENANTS), readers: dataset }),
    ...mcp.tools,
    ...extra,
  ]);
  // A call must name a run of its tenant and user before the PDP is even asked (SPEC §10).
  const owned = requireRunOwner(createInvokeHandler({ registry, pdp, results: createPgIdempotencyStore(lockPool), logger }), createPgRunOwners(pool));
  const registered = new Set(registry.list().map((t) => t.name));
  const invoke = tracedInvoke(withInvokeMetrics(owned, metrics, registered), registered);
  deferred.attach({ registry, invoke, logger });
  starting.done();
  logger.info({ tools: registry.list().map((t) => t.name), datasets: datasets.map((d) => d.name) }, "ready");
}

main().catch((err) => {
  process.stderr.write(`tool-exec failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

export { readConfig, env, commonConfig, healthConfig, ConfigError, stewardEnvironments, type StewardEnv, type Parser } from "./config";
export { testHooks, testHooksConfig } from "./test-hooks";
export { createLogger, type Logger } from "./logger";
export {
  StewardError,
  BadRequestError,
  UnauthenticatedError,
  ForbiddenError,
  NotFoundError,
  ConflictError,
  ValidationError,
  RateLimitedError,
  UnavailableError,
  ConcurrencyError,
} from "./errors";
export { createPool, guardPool, inTransaction, releaseClient, pgTimestampToIso, type Pool, type PoolClient, type PoolOptions } from "./pg/pool";
export { isPostgresUnavailable, isQueryTimeout } from "./pg/transient";
export { preparedStatement } from "./pg/prepared";
export { timeOrderedId } from "./pg/time-ordered-id";
export { createBatcher, isDataError, oneStatementOrEachAlone, togetherOrEachAlone, type Batcher, type BatcherOptions, type RunBatch } from "./pg/batches";
export { connectNats, inboxPrefixOf, type NatsConnection, type NatsConnectOptions } from "./nats/connect";
export {
  createStreamPublisher,
  streamPublisherOf,
  NoStreamError,
  PublishTimeoutError,
  PublisherClosedError,
  type StreamMessage,
  type StreamPublisher,
  type StreamPublisherOptions,
} from "./nats/stream-publisher";
export { watchNatsLink, type NatsLink } from "./nats/link";
export { natsAuthConfig, natsAuth, natsInboxPrefix } from "./nats/credentials";
export { natsPermissions, natsServerConfig, type NatsPermissions } from "./nats/permissions";
export { ensureStream, ensureConsumer, provisionTopology, provisionRunnerConsumer, type TopologyOptions, type RunnerConsumerOptions } from "./nats/provision";
export { createGrpcServer, bindGrpc, shutdownGrpc, grpcError, grpc } from "./grpc/serve";
export { callStreamsOf, serveCallStream, CallDroppedError, CallStreams, type CallMeta, type StreamedCall, type StreamedReply } from "./grpc/call-stream";
export { droppedCallError, streamedCalls, type StreamedCalls } from "./grpc/streamed-calls";
export { grpcTlsConfig, loadGrpcTls, grpcServerCredentials, grpcChannelCredentials, grpcClientOptions, identityOf, type GrpcTls } from "./grpc/tls";
export { allowPeers, type PeerRules } from "./grpc/peers";
export { serviceIdentities, type ServiceIdentity } from "./identities";
export { onShutdown, type ShutdownOptions } from "./shutdown";
export { createReadiness, up, down, type Readiness, type ReadinessReport, type CheckResult, type Check } from "./health/readiness";
export { serveHealth, type HealthServer, type HealthServeOptions } from "./health/serve";
export { postgresCheck, linkCheck, channelCheck } from "./health/checks";
export { answerStatusPings, type InstanceStatus } from "./health/status-responder";
export { cappedBackoffMs, retryUntilUp, type RetryOptions } from "./retry";
export { metricCatalog, otherLabelValue, noCode, type MetricDef, type MetricName, type LabelValues } from "./metrics/catalog";
export { createLabelBounds, checkLabelNames, maxDistinctValues, MetricDefinitionError, type LabelSet } from "./metrics/labels";
export {
  createMetrics,
  secondsSince,
  type Metrics,
  type MetricsOptions,
  type CounterMetric,
  type GaugeMetric,
  type HistogramMetric,
  type GaugeCollector,
} from "./metrics/registry";
export { watchPools, type PoolCounts } from "./metrics/pg-pool";
export { breakerGauge, type BreakerState } from "./metrics/breaker-gauge";
export { parseExposition, sampleValue, type Sample } from "./metrics/exposition";
export { startTracing, type Tracing, type TracingOptions } from "./tracing/start-tracing";
export { tracingConfig, readTracingConfig, tracesUrl, type TracingConfig } from "./tracing/tracing-config";
export { inSpan, startSpan, failSpan, traceparentFor, tracingOn, SpanKind, type Span, type Attributes, type StartOptions } from "./tracing/spans";

export { readConfig, env, commonConfig, healthConfig, ConfigError, stewardEnvironments, type StewardEnv, type Parser } from "./config";
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
export { createPool, guardPool, inTransaction, pgTimestampToIso, type Pool, type PoolClient, type PoolOptions } from "./pg/pool";
export { isPostgresUnavailable } from "./pg/transient";
export { connectNats, type NatsConnection, type NatsConnectOptions } from "./nats/connect";
export { watchNatsLink, type NatsLink } from "./nats/link";
export {
  ensureStream,
  ensureConsumer,
  provisionTopology,
  provisionRunnerConsumer,
  type TopologyOptions,
  type RunnerConsumerOptions,
} from "./nats/provision";
export { createGrpcServer, bindGrpc, shutdownGrpc, grpcError, grpc } from "./grpc/serve";
export { onShutdown, type ShutdownOptions } from "./shutdown";
export { createReadiness, up, down, type Readiness, type ReadinessReport, type CheckResult, type Check } from "./health/readiness";
export { serveHealth, type HealthServer } from "./health/serve";
export { postgresCheck, linkCheck, channelCheck } from "./health/checks";
export { answerStatusPings, type InstanceStatus } from "./health/status-responder";
export { retryUntilUp, type RetryOptions } from "./retry";

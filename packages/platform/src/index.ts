export { readConfig, env, commonConfig, ConfigError, stewardEnvironments, type StewardEnv, type Parser } from "./config";
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
  ConcurrencyError,
} from "./errors";
export { createPool, inTransaction, pgTimestampToIso, type Pool, type PoolClient } from "./pg/pool";
export { connectNats, type NatsConnection } from "./nats/connect";
export {
  ensureStream,
  ensureConsumer,
  provisionTopology,
  provisionRunnerConsumer,
  type TopologyOptions,
  type RunnerConsumerOptions,
} from "./nats/provision";
export { createGrpcServer, bindGrpc, shutdownGrpc, grpcError, grpc } from "./grpc/serve";
export { onShutdown } from "./shutdown";

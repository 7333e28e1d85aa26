import type { FastifyBaseLogger, FastifyLogFn as LogFn, FastifyServerOptions } from "fastify";

type Bindings = Parameters<FastifyBaseLogger["child"]>[0];
type ChildLoggerOptions = NonNullable<Parameters<FastifyBaseLogger["child"]>[1]>;

const LOG_METHODS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/**
 * A request's logger (`request.log`): the gateway's logger with the request's id, made the first time the request
 * logs. Fastify asks for one on every request, and most requests log nothing (there is no line per request), while
 * making a pino child passes its bindings through the logger's redaction every time (docs/performance.md,
 * "Design decisions and the measurements behind them").
 */
class RequestLogger implements FastifyBaseLogger {
  declare readonly fatal: LogFn;
  declare readonly error: LogFn;
  declare readonly warn: LogFn;
  declare readonly info: LogFn;
  declare readonly debug: LogFn;
  declare readonly trace: LogFn;
  declare readonly silent: LogFn;
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  /** The child itself, made once. */
  logger(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.made?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger().level = level;
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger().child(bindings, options);
  }
}

for (const method of LOG_METHODS) {
  Object.defineProperty(RequestLogger.prototype, method, {
    value(this: RequestLogger, ...args: unknown[]) {
      (this.logger()[method] as (...a: unknown[]) => void)(...args);
    },
  });
}

/** Fastify's `childLoggerFactory`: each request's logger, made only when the request logs. */
export const requestLoggerFactory: NonNullable<FastifyServerOptions["childLoggerFactory"]> = (logger, bindings, options) =>
  new RequestLogger(logger, bindings, options);

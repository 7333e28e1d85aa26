import { ConfigError, env, readConfig, type Parser } from "../config";

/** `key=value` pairs separated by commas (OTLP headers); a bad value is named, never echoed (it may hold a key). */
const headerList = (): Parser<string | undefined> => (raw, name) => {
  if (raw === undefined || raw === "") return undefined;
  for (const pair of raw.split(",")) {
    const eq = pair.indexOf("=");
    if (eq <= 0 || pair.slice(0, eq).trim() === "") throw new ConfigError(name, "must be key=value pairs separated by commas");
  }
  return raw;
};

/**
 * The standard OpenTelemetry variables Steward reads (validated at boot like every other variable). Tracing is
 * on only when an OTLP endpoint is set; only OTLP over HTTP with JSON bodies is spoken.
 */
export const tracingConfig = {
  /** Base URL of an OTLP/HTTP receiver; traces go to `<base>/v1/traces`. Unset (and no traces endpoint): tracing off. */
  OTEL_EXPORTER_OTLP_ENDPOINT: env.optionalUrl(["http", "https"]),
  /** Full URL for traces, used as written; wins over OTEL_EXPORTER_OTLP_ENDPOINT. */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: env.optionalUrl(["http", "https"]),
  OTEL_EXPORTER_OTLP_PROTOCOL: env.oneOf(["http/json"] as const, "http/json"),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: env.oneOf(["http/json"] as const, "http/json"),
  /** Read by the exporter itself (an API key for a hosted collector goes here). */
  OTEL_EXPORTER_OTLP_HEADERS: headerList(),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: headerList(),
  /** `true` keeps tracing off even with an endpoint set. */
  OTEL_SDK_DISABLED: env.flag(),
  /** Delay between two exports of the batch, ms. Default 5000. */
  OTEL_BSP_SCHEDULE_DELAY: env.int(0, 3_600_000, 5000),
  /** Spans waiting for export at most; more are dropped (never blocking a step). Default 2048. */
  OTEL_BSP_MAX_QUEUE_SIZE: env.int(1, 1_000_000, 2048),
  /** Spans per export at most. Default 512. */
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: env.int(1, 1_000_000, 512),
  /** How long one export may take, ms. Default 30000. */
  OTEL_BSP_EXPORT_TIMEOUT: env.int(1, 3_600_000, 30_000),
};

export type TracingConfig = ReturnType<typeof readTracingConfig>;

export function readTracingConfig(source: NodeJS.ProcessEnv = process.env) {
  return readConfig(tracingConfig, source);
}

/** Where spans are sent, or undefined when tracing is off. */
export function tracesUrl(config: TracingConfig): string | undefined {
  if (config.OTEL_SDK_DISABLED) return undefined;
  if (config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const base = config.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!base) return undefined;
  return `${base.endsWith("/") ? base : `${base}/`}v1/traces`;
}

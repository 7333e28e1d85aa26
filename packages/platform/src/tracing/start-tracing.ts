import { context, propagation, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { defaultResource, resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { readTracingConfig, tracesUrl } from "./tracing-config";
import { setTracingOn, tracingOn } from "./spans";

export interface Tracing {
  /** True when spans are recorded and exported. */
  readonly enabled: boolean;
  /** Exports the spans still queued and unregisters the provider; put it on the service's shutdown list. */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** Where the OTEL_* variables are read. Default: process.env. */
  readonly source?: NodeJS.ProcessEnv;
  /** Replaces the OTLP exporter (tests: an in-memory one); tracing is still on only with an endpoint set. */
  readonly exporter?: SpanExporter;
  /** How long shutdown waits for the last export, ms: a collector away must not hold the process. Default 2000. */
  readonly flushTimeoutMs?: number;
}

const off: Tracing = { enabled: false, shutdown: async () => undefined };

/**
 * Starts tracing for one service when an OTLP endpoint is configured: manual spans only (no module is patched),
 * batched and sent over OTLP/HTTP (JSON). Without an endpoint nothing is started and every span helper is a
 * no-op. Throws ConfigError, naming the variable, for a bad OTEL_* value.
 */
export function startTracing(serviceName: string, options: TracingOptions = {}): Tracing {
  const config = readTracingConfig(options.source);
  const url = tracesUrl(config);
  if (!url || tracingOn()) return off;
  const exporter = options.exporter ?? new OTLPTraceExporter({ url, timeoutMillis: config.OTEL_BSP_EXPORT_TIMEOUT });
  const provider = new NodeTracerProvider({
    // The service's own name always: one OTEL_SERVICE_NAME shared by the four would make them one service.
    resource: defaultResource().merge(resourceFromAttributes({ "service.name": serviceName, "service.namespace": "steward" })),
    spanProcessors: [
      new BatchSpanProcessor(exporter, {
        scheduledDelayMillis: config.OTEL_BSP_SCHEDULE_DELAY,
        maxQueueSize: config.OTEL_BSP_MAX_QUEUE_SIZE,
        maxExportBatchSize: Math.min(config.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, config.OTEL_BSP_MAX_QUEUE_SIZE),
        exportTimeoutMillis: config.OTEL_BSP_EXPORT_TIMEOUT,
      }),
    ],
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  setTracingOn(true);
  let stopped: Promise<void> | undefined;
  return {
    enabled: true,
    shutdown() {
      stopped ??= (async () => {
        setTracingOn(false);
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, options.flushTimeoutMs ?? 2000);
          timer.unref();
        });
        try {
          await Promise.race([provider.shutdown().catch(() => undefined), late]);
        } finally {
          clearTimeout(timer);
          trace.disable();
          context.disable();
          propagation.disable();
        }
      })();
      return stopped;
    },
  };
}

import { trace } from "@opentelemetry/api";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import { ConfigError } from "../config";
import { startTracing } from "./start-tracing";
import { failSpan, inSpan, SpanKind, startSpan, traceparentFor, tracingOn } from "./spans";
import { readTracingConfig, tracesUrl } from "./tracing-config";

const incoming = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

/** Keeps what it is given (the SDK's in-memory exporter forgets everything on shutdown). */
function keepingExporter(): SpanExporter & { spans: ReadableSpan[] } {
  const spans: ReadableSpan[] = [];
  return {
    spans,
    export(batch, done) {
      spans.push(...batch);
      done({ code: 0 });
    },
    shutdown: async () => undefined,
  };
}

describe("tracing kit, off", () => {
  it("starts nothing without an endpoint: no provider, no-op spans, the received traceparent passed on as it is", async () => {
    const tracing = startTracing("test-service", { source: {} });
    expect(tracing.enabled).toBe(false);
    expect(tracingOn()).toBe(false);
    // Nothing registered globally: the API's own tracer records nothing.
    expect(trace.getTracer("anyone").startSpan("x").isRecording()).toBe(false);
    const span = startSpan("x", { kind: SpanKind.SERVER, parent: incoming });
    expect(span.isRecording()).toBe(false);
    // The same shared object every time: nothing is allocated per span while off.
    expect(startSpan("y", { kind: SpanKind.CLIENT })).toBe(span);
    const seen = await inSpan("z", { kind: SpanKind.INTERNAL, parent: incoming }, async (s) => {
      expect(s).toBe(span);
      return traceparentFor(s, incoming);
    });
    expect(seen).toBe(incoming);
    expect(traceparentFor(span)).toBeUndefined();
    await tracing.shutdown();
  });

  it("stays off when OTEL_SDK_DISABLED is true, even with an endpoint", () => {
    const tracing = startTracing("test-service", { source: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_SDK_DISABLED: "true" } });
    expect(tracing.enabled).toBe(false);
    expect(tracingOn()).toBe(false);
  });
});

describe("tracing configuration", () => {
  it("sends to <endpoint>/v1/traces, or to the traces endpoint as written", () => {
    expect(tracesUrl(readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }))).toBe("http://collector:4318/v1/traces");
    expect(tracesUrl(readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/base/" }))).toBe("http://collector:4318/base/v1/traces");
    expect(tracesUrl(readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://b/otlp/traces" }))).toBe(
      "https://b/otlp/traces",
    );
    expect(tracesUrl(readTracingConfig({}))).toBeUndefined();
  });

  it.each([
    ["OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318"],
    ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "ftp://collector"],
    ["OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"],
    ["OTEL_BSP_SCHEDULE_DELAY", "soon"],
    ["OTEL_SDK_DISABLED", "maybe"],
  ])("a bad %s stops the boot, naming it", (variable, value) => {
    expect(() => startTracing("test-service", { source: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", [variable]: value } })).toThrow(
      expect.objectContaining({ name: "ConfigError", variable }),
    );
    expect(tracingOn()).toBe(false);
  });

  it("names bad OTLP headers without echoing them (they may hold an API key)", () => {
    let error: unknown;
    try {
      readTracingConfig({ OTEL_EXPORTER_OTLP_HEADERS: "s3cr3t-api-key" });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe("OTEL_EXPORTER_OTLP_HEADERS");
    expect((error as Error).message).not.toContain("s3cr3t");
    expect(readTracingConfig({ OTEL_EXPORTER_OTLP_HEADERS: "api-key=abc,x-tenant=1" }).OTEL_EXPORTER_OTLP_HEADERS).toBe("api-key=abc,x-tenant=1");
  });
});

describe("tracing kit, on", () => {
  it("continues an incoming traceparent, nests spans by the active one, and hands the child's traceparent on", async () => {
    const exporter = keepingExporter();
    const tracing = startTracing("test-service", { source: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1" }, exporter });
    expect(tracing.enabled).toBe(true);
    expect(tracingOn()).toBe(true);

    let outgoing: string | undefined;
    await inSpan("process run", { kind: SpanKind.CONSUMER, parent: incoming }, async () => {
      // No parent given: the active span (the one above) is the parent.
      await inSpan("chat model", { kind: SpanKind.CLIENT, attributes: { "gen_ai.operation.name": "chat" } }, async (span) => {
        outgoing = traceparentFor(span, incoming);
      });
    });
    await expect(
      inSpan("fails", { kind: SpanKind.INTERNAL, parent: incoming }, async () => {
        throw new TypeError("the user's secret text");
      }),
    ).rejects.toThrow(TypeError);
    const manual = startSpan("manual", { kind: SpanKind.SERVER });
    failSpan(manual, new RangeError("x"));
    manual.end();
    await tracing.shutdown();
    expect(tracingOn()).toBe(false);
    // Unregistered: a later span records nothing.
    expect(trace.getTracer("anyone").startSpan("x").isRecording()).toBe(false);

    const byName = new Map(exporter.spans.map((s) => [s.name, s]));
    const consumer = byName.get("process run")!;
    const chat = byName.get("chat model")!;
    const [, traceId, parentId] = TRACEPARENT.exec(incoming)!;
    expect(consumer.spanContext().traceId).toBe(traceId);
    expect(consumer.parentSpanContext?.spanId).toBe(parentId);
    expect(chat.spanContext().traceId).toBe(traceId);
    expect(chat.parentSpanContext?.spanId).toBe(consumer.spanContext().spanId);
    expect(chat.attributes["gen_ai.operation.name"]).toBe("chat");
    expect(chat.resource.attributes["service.name"]).toBe("test-service");
    // The traceparent handed on names the chat span, in the same trace.
    expect(outgoing).toBe(`00-${traceId}-${chat.spanContext().spanId}-01`);

    const failed = byName.get("fails")!;
    expect(failed.status.code).toBe(2);
    expect(failed.attributes["error.type"]).toBe("TypeError");
    expect(JSON.stringify({ attributes: failed.attributes, events: failed.events, status: failed.status })).not.toContain("secret text");
    expect(byName.get("manual")!.attributes["error.type"]).toBe("RangeError");
    // A new root where no parent was given nor active.
    expect(byName.get("manual")!.parentSpanContext).toBeUndefined();
  });
});

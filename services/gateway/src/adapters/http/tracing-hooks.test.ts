import Fastify from "fastify";
import { startTracing, type TracingOptions } from "@steward/platform";
import { traceparentOf } from "./trace-context";
import { traceHttp } from "./tracing-hooks";

type Exporter = NonNullable<TracingOptions["exporter"]>;
type Exported = Parameters<Exporter["export"]>[0][number];

const incoming = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
const runId = "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0";

/** A stand-in app whose routes answer with the traceparent the gateway would pass on and record. */
function demoApp() {
  const app = Fastify({ forceCloseConnections: true });
  app.get("/v1/agents/runs/:id", async (request) => ({ traceparent: traceparentOf(request) }));
  app.get("/boom", async (_request, reply) => reply.code(503).send({ code: 1 }));
  return app;
}

describe("gateway request spans (hooks added after the routes, as main.ts does)", () => {
  it("makes each request a server span, continuing the caller's trace, and passes the span's own traceparent on", async () => {
    const spans: Exported[] = [];
    const exporter: Exporter = { export: (batch, done) => (spans.push(...batch), done({ code: 0 })), shutdown: async () => undefined };
    const tracing = startTracing("gateway", { source: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1" }, exporter });
    const app = demoApp();
    traceHttp(app);
    const address = await app.listen({ port: 0, host: "127.0.0.1" });
    let continued: { traceparent: string };
    let rooted: { traceparent: string };
    try {
      continued = (await (await fetch(`${address}/v1/agents/runs/${runId}`, { headers: { traceparent: incoming } })).json()) as { traceparent: string };
      rooted = (await (await fetch(`${address}/v1/agents/runs/${runId}`)).json()) as { traceparent: string };
      expect((await fetch(`${address}/boom`)).status).toBe(503);
      await app.close();
    } finally {
      await tracing.shutdown();
    }
    const ok = spans.filter((s) => s.name === "GET /v1/agents/runs/:id");
    expect(ok).toHaveLength(2);
    const [first, second] = ok;
    // The caller's trace goes on; what the request passes on is the span's own context.
    expect(first.spanContext().traceId).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(first.parentSpanContext?.spanId).toBe("b7ad6b7169203331");
    expect(first.attributes).toMatchObject({ "http.request.method": "GET", "http.route": "/v1/agents/runs/:id", "http.response.status_code": 200 });
    expect(second.parentSpanContext).toBeUndefined();
    const boom = spans.find((s) => s.name === "GET /boom")!;
    expect(boom.status.code).toBe(2);
    expect(boom.attributes["error.type"]).toBe("503");
    // The route pattern only: never the raw path with its ids.
    expect(JSON.stringify(spans.map((s) => [s.name, s.attributes]))).not.toContain(runId);
    // What each request passed on (to the PDP, into a run's rows) names its own span.
    const traceparentOfSpan = (s: Exported) => `00-${s.spanContext().traceId}-${s.spanContext().spanId}-01`;
    expect(continued.traceparent).toBe(traceparentOfSpan(first));
    expect(rooted.traceparent).toBe(traceparentOfSpan(second));
  });

  it("adds nothing without tracing: the caller's traceparent is passed on as it came", async () => {
    const app = demoApp();
    traceHttp(app);
    const address = await app.listen({ port: 0, host: "127.0.0.1" });
    try {
      const answer = (await (await fetch(`${address}/v1/agents/runs/${runId}`, { headers: { traceparent: incoming } })).json()) as { traceparent: string };
      expect(answer.traceparent).toBe(incoming);
    } finally {
      await app.close();
    }
  });
});

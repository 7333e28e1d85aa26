import Fastify from "fastify";
import { createMetrics, sampleValue } from "@steward/platform";
import { instrumentHttp } from "./metrics-hooks";

/** A stand-in app: a JSON route with an id, and an event stream answered by hijacking, as the gateway does. */
function demoApp() {
  const app = Fastify({ forceCloseConnections: true });
  app.get("/v1/agents/runs/:id", async (request, reply) => {
    const { id } = request.params as { id: string };
    if (id === "missing") return reply.code(404).send({ code: 10050 });
    return { id };
  });
  app.get("/v1/agents/runs/:id/events", async (request, reply) => {
    if ((request.params as { id: string }).id === "missing") return reply.code(404).send({ code: 10050 });
    reply.hijack();
    reply.raw.writeHead(200, { "content-type": "text/event-stream" });
    reply.raw.write(": open\n\n");
  });
  return app;
}

describe("gateway HTTP metrics (hooks added after the routes, as main.ts would)", () => {
  it("times requests by route pattern and status class, never by the path's ids", async () => {
    const app = demoApp();
    const metrics = createMetrics("gateway", { defaults: false });
    instrumentHttp(app, metrics);
    const address = await app.listen({ port: 0, host: "127.0.0.1" });
    for (const path of ["/v1/agents/runs/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0", "/v1/agents/runs/missing", "/nowhere/0b1c2d3e"]) {
      await (await fetch(`${address}${path}`)).text();
    }
    const text = await metrics.text();
    const count = (route: string, status_class: string) =>
      sampleValue(text, "steward_http_request_duration_seconds_count", { method: "GET", route, status_class });
    expect(count("/v1/agents/runs/:id", "2xx")).toBe(1);
    expect(count("/v1/agents/runs/:id", "4xx")).toBe(1);
    expect(count("unmatched", "4xx")).toBe(1);
    expect(text).not.toContain("0b1c2d3e");
    await app.close();
  });

  it("counts the event streams open now: a stream while it lasts, not a refused one", async () => {
    const app = demoApp();
    const metrics = createMetrics("gateway", { defaults: false });
    instrumentHttp(app, metrics);
    const address = await app.listen({ port: 0, host: "127.0.0.1" });
    const open = async () => sampleValue(await metrics.text(), "steward_sse_streams_open");
    try {
      expect(await open()).toBe(0);
      const refused = await fetch(`${address}/v1/agents/runs/missing/events`, { headers: { accept: "text/event-stream" } });
      expect(refused.status).toBe(404);
      const stop = new AbortController();
      const stream = await fetch(`${address}/v1/agents/runs/r1/events`, { headers: { accept: "text/event-stream" }, signal: stop.signal });
      const reader = stream.body!.getReader();
      await reader.read(); // the stream is open and has said so
      expect(await open()).toBe(1);
      stop.abort();
      await reader.read().catch(() => undefined);
      const deadline = Date.now() + 5000;
      while ((await open()) !== 0 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
      expect(await open()).toBe(0);
    } finally {
      await app.close();
    }
  });
});

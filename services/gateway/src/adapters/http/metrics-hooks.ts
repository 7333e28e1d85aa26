import type { ServerResponse } from "node:http";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { metricCatalog, type Metrics } from "@steward/platform";

/** The route pattern a request matched ("unmatched" for a 404 without a route: never the raw path, which holds ids). */
function routeOf(request: FastifyRequest): string {
  return request.routeOptions.url ?? "unmatched";
}

function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

/** A request that may become an event stream: it asks for one and nothing has answered it otherwise yet. */
function mayStream(request: FastifyRequest): boolean {
  return request.method === "GET" && String(request.headers.accept ?? "").includes("text/event-stream");
}

/**
 * The gateway's HTTP metrics as hooks on its Fastify app: every request's duration by method, route pattern
 * and status class; and the event streams open now. A stream answers by hijacking its reply, so it is
 * counted from the raw responses still open that asked for a stream and were answered 200 (a refusal, a
 * 404, is not a stream), read at scrape time: nothing is done per event sent.
 */
export function instrumentHttp(app: FastifyInstance, metrics: Metrics): void {
  const duration = metrics.histogram(metricCatalog.httpRequestDuration);
  const candidates = new Set<ServerResponse>();
  metrics.gauge(metricCatalog.sseStreamsOpen, (gauge) => {
    let open = 0;
    for (const res of candidates) if (res.headersSent && res.statusCode === 200) open++;
    gauge.set({}, open);
  });
  app.addHook("onRequest", async (request, reply) => {
    if (!mayStream(request)) return;
    const res = reply.raw;
    candidates.add(res);
    // 'close' comes when the response ends or the client goes away, whichever is first.
    res.once("close", () => candidates.delete(res));
  });
  app.addHook("onResponse", async (request, reply) => {
    duration.observe({ method: request.method, route: routeOf(request), status_class: statusClass(reply.statusCode) }, reply.elapsedTime / 1000);
  });
}

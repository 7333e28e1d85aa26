import type { FastifyInstance } from "fastify";
import { failSpan, SpanKind, startSpan, traceparentFor, tracingOn } from "@steward/platform";
import { adoptTraceparent } from "./trace-context";

/**
 * One server span per HTTP request, as a hook on the gateway's Fastify app: the method, the route pattern
 * (never the raw path, which holds ids), the status. A child of the caller's `traceparent` when it sent a
 * valid one; the span's own traceparent is what the request passes on (to the PDP, into the run's outbox
 * rows), so a run's spans in every service are one trace with this span at its root. The span ends when
 * the response closes, an event stream's included. Without tracing, no hook is added.
 */
export function traceHttp(app: FastifyInstance): void {
  if (!tracingOn()) return;
  app.addHook("onRequest", async (request, reply) => {
    const route = request.routeOptions.url;
    const incoming = request.headers.traceparent;
    const span = startSpan(route ? `${request.method} ${route}` : request.method, {
      kind: SpanKind.SERVER,
      parent: typeof incoming === "string" ? incoming : undefined,
      attributes: { "http.request.method": request.method, "url.scheme": request.protocol, ...(route ? { "http.route": route } : {}) },
    });
    const own = traceparentFor(span);
    if (own) adoptTraceparent(request, own);
    reply.raw.once("close", () => {
      const status = reply.raw.statusCode;
      span.setAttribute("http.response.status_code", status);
      if (status >= 500) failSpan(span, String(status));
      span.end();
    });
  });
}

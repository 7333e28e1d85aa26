import type { FastifyRequest } from "fastify";
import { randomBytes } from "node:crypto";

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

const traces = new WeakMap<FastifyRequest, string>();

/**
 * The request's own span took over (tracing on, tracing-hooks.ts): what the gateway passes on and records for a
 * run is that span's context, so the run's spans join the request's trace. Called before anything asks.
 */
export function adoptTraceparent(request: FastifyRequest, traceparent: string): void {
  traces.set(request, traceparent);
}

/** The caller's W3C trace context, or a new one rooted here: one per request, however often it is asked. */
export function traceparentOf(request: FastifyRequest): string {
  const known = traces.get(request);
  if (known) return known;
  const incoming = request.headers.traceparent;
  const traceparent =
    typeof incoming === "string" && TRACEPARENT.test(incoming)
      ? incoming
      : `00-${randomBytes(16).toString("hex")}-${randomBytes(8).toString("hex")}-01`;
  traces.set(request, traceparent);
  return traceparent;
}

/** A new W3C trace context rooted here (an MCP tool call, which arrives inside a request of the session). */
export function newTraceparent(): string {
  return `00-${randomBytes(16).toString("hex")}-${randomBytes(8).toString("hex")}-01`;
}

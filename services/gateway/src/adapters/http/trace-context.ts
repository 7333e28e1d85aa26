import type { FastifyRequest } from "fastify";
import { randomFillSync } from "node:crypto";

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

const traces = new WeakMap<FastifyRequest, string>();

/** Bytes of randomness drawn at once for the trace ids: one call into the CSPRNG per 170 requests, not two per request. */
const ENTROPY_BYTES = 4096;
/** The ids of one trace context: a trace id (16 bytes) and a span id (8), each byte used once. */
const CONTEXT_BYTES = 24;
let entropy = Buffer.alloc(0);
let taken = 0;

/**
 * A new W3C trace context rooted here, from the pooled randomness: a request's without one, and an MCP tool call's
 * (which arrives inside a request of the session).
 */
export function newTraceparent(): string {
  if (taken + CONTEXT_BYTES > entropy.length) {
    entropy = randomFillSync(Buffer.allocUnsafe(ENTROPY_BYTES));
    taken = 0;
  }
  const ids = entropy.toString("hex", taken, taken + CONTEXT_BYTES);
  taken += CONTEXT_BYTES;
  return `00-${ids.slice(0, 32)}-${ids.slice(32)}-01`;
}

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
  const traceparent = typeof incoming === "string" && TRACEPARENT.test(incoming) ? incoming : newTraceparent();
  traces.set(request, traceparent);
  return traceparent;
}

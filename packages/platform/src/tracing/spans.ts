import {
  INVALID_SPAN_CONTEXT,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  isSpanContextValid,
  trace,
  type Attributes,
  type Context,
  type Span,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";

export { SpanKind, type Span, type Attributes };

/** Whether a tracer provider of ours is registered (startTracing); off, every helper here does nothing. */
let on = false;

/** Set by startTracing and its shutdown only. */
export function setTracingOn(value: boolean): void {
  on = value;
}

export function tracingOn(): boolean {
  return on;
}

const propagator = new W3CTraceContextPropagator();
/** The span handed out while tracing is off: one shared object whose every method does nothing. */
const noSpan: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

export interface StartOptions {
  readonly kind: SpanKind;
  readonly attributes?: Attributes;
  /** The caller's W3C `traceparent`; without one, the span is a child of the active span (if any). */
  readonly parent?: string;
}

function parentOf(options: StartOptions): Context {
  if (options.parent === undefined) return context.active();
  return propagator.extract(ROOT_CONTEXT, { traceparent: options.parent }, defaultTextMapGetter);
}

/** Starts a span the caller ends (a span across hooks); a shared no-op span when tracing is off. */
export function startSpan(name: string, options: StartOptions): Span {
  if (!on) return noSpan;
  return trace.getTracer("steward").startSpan(name, { kind: options.kind, attributes: options.attributes }, parentOf(options));
}

/**
 * Marks a span failed with the error's class only (or, given a string, that code: an HTTP status, say): a
 * message may quote input, so it is never recorded.
 */
export function failSpan(span: Span, err: unknown): void {
  if (span === noSpan) return;
  span.setAttribute("error.type", typeof err === "string" ? err : err instanceof Error ? err.name : "unknown");
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/**
 * Runs `fn` inside a span (the active span meanwhile, so spans started within are its children), ending it when
 * `fn` settles; a thrown error marks it failed. Off, `fn` runs as it is, with the no-op span.
 */
export async function inSpan<T>(name: string, options: StartOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  if (!on) return fn(noSpan);
  const parent = parentOf(options);
  const span = trace.getTracer("steward").startSpan(name, { kind: options.kind, attributes: options.attributes }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/**
 * The `traceparent` to pass downstream so the callee's spans are this span's children; `fallback` (the
 * traceparent received) when tracing is off, so the chain of ids is carried on unchanged.
 */
export function traceparentFor(span: Span, fallback?: string): string | undefined {
  if (span === noSpan || !isSpanContextValid(span.spanContext())) return fallback;
  const carrier: Record<string, string> = {};
  propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
  return carrier.traceparent ?? fallback;
}

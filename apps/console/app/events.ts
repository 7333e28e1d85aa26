import type { SseMessage } from "./sse";

/**
 * A run event: stored ones keep the gateway's envelope (seq, type, data, recorded_at); the live-only ones
 * (message.delta, iteration_limit, error) are the bare payload, without a seq.
 */
export interface RunEvent {
  readonly type: string;
  readonly seq?: number;
  readonly data: Record<string, unknown>;
  readonly recorded_at?: string;
}

const asObject = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };

export function eventOf(message: SseMessage): RunEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(message.data);
  } catch {
    parsed = message.data;
  }
  if (message.id === undefined) return { type: message.event, data: asObject(parsed) };
  const envelope = asObject(parsed);
  return {
    type: typeof envelope.type === "string" ? envelope.type : message.event,
    seq: typeof envelope.seq === "number" ? envelope.seq : Number(message.id),
    data: asObject(envelope.data),
    ...(typeof envelope.recorded_at === "string" ? { recorded_at: envelope.recorded_at } : {}),
  };
}

export const TERMINAL_EVENTS: ReadonlySet<string> = new Set(["run.succeeded", "run.failed", "run.cancelled"]);

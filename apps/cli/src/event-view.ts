import type { SseEvent } from "@steward/contract";

/**
 * A run event as the CLI handles it: stored events keep the envelope the gateway sends (`seq`, `type`,
 * `data`, `recorded_at`); the live-only ones (`message.delta`, `iteration_limit`, `error`) have no `seq`.
 */
export interface EventView {
  readonly type: string;
  readonly seq?: number;
  readonly data: Record<string, unknown>;
  readonly recorded_at?: string;
}

const asObject = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };

/** The view of one SSE event: the envelope of a stored one (it has an id), the bare payload of the others. */
export function eventViewOf(sse: SseEvent): EventView {
  let parsed: unknown;
  try {
    parsed = JSON.parse(sse.data);
  } catch {
    parsed = sse.data;
  }
  if (sse.id !== undefined) {
    const envelope = asObject(parsed);
    return {
      type: typeof envelope.type === "string" ? envelope.type : sse.event,
      seq: typeof envelope.seq === "number" ? envelope.seq : Number(sse.id),
      data: asObject(envelope.data),
      ...(typeof envelope.recorded_at === "string" ? { recorded_at: envelope.recorded_at } : {}),
    };
  }
  return { type: sse.event, data: asObject(parsed) };
}

export const TERMINAL_TYPES: ReadonlySet<string> = new Set(["run.succeeded", "run.failed", "run.cancelled"]);

/** The run state a terminal event stands for. */
export function stateOfTerminal(type: string): string {
  return type.replace(/^run\./, "");
}

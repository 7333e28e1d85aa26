import { PayloadLimits, eventBytes, type RunEvent } from "@steward/contract";

/**
 * An event is larger than `PayloadLimits.eventBytes`: nothing of the append was written, and writing it again
 * will fail again (permanent). The message names the run, the event type and the sizes, never the content.
 */
export class EventTooLargeError extends Error {
  constructor(
    readonly streamId: string,
    readonly eventType: string,
    readonly bytes: number,
    readonly limitBytes: number = PayloadLimits.eventBytes,
  ) {
    super(`event ${eventType} of stream ${streamId} is ${bytes} bytes, over the ${limitBytes}-byte event limit; nothing was appended`);
    this.name = "EventTooLargeError";
  }
}

/**
 * Refuses the whole append when any event is over the limit, before a byte reaches PostgreSQL (and, through
 * the outbox, NATS). Producers cut what can be cut (tool-exec cuts tool results); this is the last guard.
 */
export function assertEventsFit(streamId: string, events: readonly RunEvent[]): void {
  for (const event of events) {
    const bytes = eventBytes(event);
    if (bytes > PayloadLimits.eventBytes) throw new EventTooLargeError(streamId, event.type, bytes);
  }
}

import type { NatsConnection } from "@nats-io/transport-node";
import type { BusNames } from "@steward/contract";

/** Live signals about one run: a stored event was published, or a token delta streamed (never stored). */
export interface RunFeed {
  /** Subscribes; `ready` resolves once the server has the subscriptions, so nothing published after is missed. */
  watch(runId: string, handlers: { onEvent(): void; onDelta(payload: unknown): void }): { ready: Promise<void>; close(): void };
}

/**
 * Core NATS subscriptions on the run's event subjects (the outbox relay's publishes) and its delta subject.
 * An event message is only a wake-up: the stream reads the events themselves from PostgreSQL, so order,
 * gaps and duplicates are PostgreSQL's, not the bus's.
 */
export function createRunFeed(nc: NatsConnection, names: BusNames): RunFeed {
  return {
    watch(runId, handlers) {
      const events = nc.subscribe(names.runEvents(runId), { callback: () => handlers.onEvent() });
      const deltas = nc.subscribe(names.runDeltas(runId), {
        callback: (err, msg) => {
          if (err) return;
          try {
            handlers.onDelta(msg.json());
          } catch {
            // not a delta
          }
        },
      });
      return {
        ready: nc.flush(),
        close() {
          events.unsubscribe();
          deltas.unsubscribe();
        },
      };
    },
  };
}

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
        // While NATS is away the flush would wait for it; the stream's own poll covers that time instead.
        ready: new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 1000);
          nc.flush().then(
            () => (clearTimeout(timer), resolve()),
            () => (clearTimeout(timer), resolve()),
          );
        }),
        close() {
          events.unsubscribe();
          deltas.unsubscribe();
        },
      };
    },
  };
}

/**
 * A feed that works before NATS answers: watches made meanwhile are subscribed when the connection is
 * attached (the stream's own poll covers the gap), so the gateway serves from its first second.
 */
export function createDeferredRunFeed(names: BusNames): RunFeed & { attach(nc: NatsConnection): void } {
  let live: RunFeed | null = null;
  type Waiting = { runId: string; handlers: Parameters<RunFeed["watch"]>[1]; close?: () => void; closed: boolean };
  const waiting = new Set<Waiting>();
  return {
    attach(nc) {
      live = createRunFeed(nc, names);
      for (const w of waiting) {
        w.close = live.watch(w.runId, w.handlers).close;
        w.handlers.onEvent();
      }
      waiting.clear();
    },
    watch(runId, handlers) {
      if (live) return live.watch(runId, handlers);
      const w: Waiting = { runId, handlers, closed: false };
      waiting.add(w);
      return {
        ready: Promise.resolve(),
        close() {
          waiting.delete(w);
          w.close?.();
        },
      };
    },
  };
}

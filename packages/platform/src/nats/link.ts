import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";

export interface NatsLink {
  /** True while the connection is up (false between a disconnect and the next reconnect). */
  readonly connected: () => boolean;
  /** Calls `fn` after every reconnect (streams may need re-creating, work may be waiting to publish). */
  onReconnect(fn: () => void): void;
}

/** Follows a connection's status: logs losing and regaining the server, and tells who needs to know. */
export function watchNatsLink(nc: NatsConnection, logger: Logger): NatsLink {
  let up = !nc.isClosed();
  const listeners: Array<() => void> = [];
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === "disconnect") {
        if (up) logger.warn("lost NATS; reconnecting");
        up = false;
      } else if (s.type === "reconnect") {
        up = true;
        logger.info("NATS is back");
        for (const fn of listeners) {
          try {
            fn();
          } catch (err) {
            logger.warn({ err }, "reconnect handler failed");
          }
        }
      } else if (s.type === "close") {
        up = false;
      }
    }
  })().catch(() => undefined);
  return {
    connected: () => up && !nc.isClosed(),
    onReconnect: (fn) => void listeners.push(fn),
  };
}

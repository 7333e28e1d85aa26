import { jetstreamManager } from "@nats-io/jetstream";
import { createInbox, type NatsConnection } from "@nats-io/transport-node";
import type { BusNames } from "@steward/contract";
import type { InstanceStatus } from "@steward/platform";
import type { BusView } from "../../app/platform-status";

/**
 * What the bus knows: every live instance answering the status ping within `windowMs` (scatter-gather on
 * a core NATS inbox), the runners' durable consumer, and the dead-letter stream.
 */
export function createBusProbe(nc: () => NatsConnection | undefined, names: BusNames, options: { windowMs?: number; inboxPrefix?: string } = {}) {
  const windowMs = options.windowMs ?? 400;

  async function instances(conn: NatsConnection): Promise<InstanceStatus[]> {
    const found: InstanceStatus[] = [];
    // The connection's own inbox prefix: with a NATS user per service, the gateway may subscribe there only.
    const inbox = conn.subscribe(createInbox(options.inboxPrefix));
    const collecting = (async () => {
      for await (const m of inbox) {
        try {
          found.push(m.json<InstanceStatus>());
        } catch {
          // not a status answer
        }
      }
      // A subscription the server refused (say, a permission) ends the answers; it must not end the process.
    })().catch(() => undefined);
    conn.publish(names.statusPing, "", { reply: inbox.getSubject() });
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    inbox.unsubscribe();
    await collecting;
    return found.sort((a, b) => `${a.service}/${a.instance}`.localeCompare(`${b.service}/${b.instance}`));
  }

  return async function probe(): Promise<BusView | null> {
    const conn = nc();
    if (!conn || conn.isClosed()) return null;
    const jsm = await jetstreamManager(conn, { timeout: 2000 });
    const [found, consumer, dlq] = await Promise.all([
      instances(conn),
      jsm.consumers.info(names.commandStream, names.runnerConsumer).catch(() => null),
      jsm.streams.info(names.deadLetterStream).catch(() => null),
    ]);
    return {
      instances: found,
      consumer: consumer
        ? {
            pending: consumer.num_pending,
            ackPending: consumer.num_ack_pending,
            redelivered: consumer.num_redelivered,
            waitingPulls: consumer.num_waiting,
          }
        : null,
      deadLetters: dlq ? { count: dlq.state.messages, lastAt: dlq.state.messages > 0 ? dlq.state.last_ts : null } : null,
    };
  };
}

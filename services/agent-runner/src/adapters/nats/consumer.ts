import { jetstream, type ConsumerMessages, type JsMsg } from "@nats-io/jetstream";
import { headers as natsHeaders, type NatsConnection } from "@nats-io/transport-node";
import type { BusNames } from "@steward/contract";
import type { Logger } from "@steward/platform";
import type { Delivery, RunRequestedHandler } from "../../app/handle-run-requested";

export interface RunConsumer {
  /** Stops pulling; resolves when the runs in hand have been answered. */
  stop(): Promise<void>;
}

function deliveryOf(msg: JsMsg, maxDeliver: number, nc: NatsConnection, names: BusNames): Delivery {
  return {
    data: msg.data,
    deliveryCount: msg.info.deliveryCount,
    maxDeliver,
    traceparent: msg.headers?.get("traceparent") || undefined,
    ack: () => msg.ack(),
    nak: (delayMs) => msg.nak(delayMs),
    // nats-server 2.9 does not parse "+TERM <reason>" and leaves the message pending (it would come back
    // after ack_wait); the reason travels on the dead-letter copy instead.
    term: () => msg.term(),
    working: () => msg.working(),
    async deadLetter(reason) {
      const h = natsHeaders();
      h.set("Steward-Dead-Letter-Reason", reason);
      h.set("Steward-Original-Subject", msg.subject);
      h.set("Steward-Original-Stream-Seq", String(msg.seq));
      await jetstream(nc).publish(names.deadLetterRunRequested, msg.data, { headers: h });
    },
  };
}

/**
 * Pulls `agent.run.requested` from the runners' shared durable consumer and drives up to `concurrency`
 * runs at once; the next message is pulled only when a slot frees.
 */
export async function startRunConsumer(
  deps: { nc: NatsConnection; names: BusNames; handle: RunRequestedHandler; logger: Logger },
  options: { concurrency: number },
): Promise<RunConsumer> {
  const js = jetstream(deps.nc);
  const consumer = await js.consumers.get(deps.names.commandStream, deps.names.runnerConsumer);
  const info = await consumer.info();
  const maxDeliver = info.config.max_deliver ?? -1;
  const inHand = new Set<Promise<void>>();
  let slotFreed: (() => void) | null = null;
  const messages: ConsumerMessages = await consumer.consume({ max_messages: options.concurrency });

  const loop = (async () => {
    for await (const msg of messages) {
      const work = deps
        .handle(deliveryOf(msg, maxDeliver > 0 ? maxDeliver : Number.MAX_SAFE_INTEGER, deps.nc, deps.names))
        .catch((err) => {
          deps.logger.error({ err }, "run handler failed");
          msg.nak(1000);
        })
        .finally(() => {
          inHand.delete(work);
          slotFreed?.();
        });
      inHand.add(work);
      while (inHand.size >= options.concurrency) {
        await new Promise<void>((resolve) => (slotFreed = resolve));
      }
    }
  })();

  return {
    async stop() {
      await messages.close();
      await loop.catch(() => undefined);
      await Promise.allSettled([...inHand]);
    },
  };
}

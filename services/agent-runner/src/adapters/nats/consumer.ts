import { jetstream, type JsMsg } from "@nats-io/jetstream";
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
 * Pulls `agent.run.requested` from the runners' shared durable consumer with `concurrency` workers, each
 * asking for exactly one message when it is free: no message waits in a client buffer while its ack wait
 * runs out, so a busy runner never sits on work another runner could take.
 */
export async function startRunConsumer(
  deps: { nc: NatsConnection; names: BusNames; handle: RunRequestedHandler; logger: Logger },
  options: { concurrency: number; pullExpiresMs?: number },
): Promise<RunConsumer> {
  const js = jetstream(deps.nc);
  const consumer = await js.consumers.get(deps.names.commandStream, deps.names.runnerConsumer);
  const info = await consumer.info();
  const maxDeliver = info.config.max_deliver && info.config.max_deliver > 0 ? info.config.max_deliver : Number.MAX_SAFE_INTEGER;
  let stopping = false;

  async function worker(): Promise<void> {
    while (!stopping) {
      let msg: JsMsg | null;
      try {
        msg = await consumer.next({ expires: options.pullExpiresMs ?? 2000 });
      } catch (err) {
        if (stopping) return;
        deps.logger.warn({ error_class: (err as Error)?.name }, "pull failed; retrying");
        await new Promise((resolve) => setTimeout(resolve, 500));
        continue;
      }
      if (!msg) continue;
      try {
        await deps.handle(deliveryOf(msg, maxDeliver, deps.nc, deps.names));
      } catch (err) {
        deps.logger.error({ err }, "run handler failed");
        msg.nak(1000);
      }
    }
  }

  const workers = Array.from({ length: options.concurrency }, () => worker());
  return {
    async stop() {
      stopping = true;
      await Promise.allSettled(workers);
    },
  };
}

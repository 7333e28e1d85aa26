import { JetStreamApiError, jetstream, type Consumer, type JsMsg } from "@nats-io/jetstream";
import { headers as natsHeaders, type NatsConnection } from "@nats-io/transport-node";
import type { BusNames } from "@steward/contract";
import type { Logger } from "@steward/platform";
import { NEW_RUN_HEADER, PUBLISHED_THROUGH_HEADER } from "@steward/store";
import type { Delivery, RunRequestedHandler } from "../../app/handle-run-requested";

export interface RunConsumer {
  /** Runs being driven right now. */
  inFlight(): number;
  /** True once the consumer has been found on the server (and until it is lost). */
  attached(): boolean;
  /** Stops pulling; resolves when the runs in hand have been answered (finished or handed back). */
  stop(): Promise<void>;
}

function deliveryOf(msg: JsMsg, maxDeliver: number, nc: NatsConnection, names: BusNames, handBack: (msg: JsMsg) => void): Delivery {
  return {
    data: msg.data,
    deliveryCount: msg.info.deliveryCount,
    maxDeliver,
    traceparent: msg.headers?.get("traceparent") || undefined,
    publishedThrough: outboxId(msg.headers?.get(PUBLISHED_THROUGH_HEADER)),
    newRun: msg.headers?.get(NEW_RUN_HEADER) === "true",
    ack: () => msg.ack(),
    nak: (delayMs) => (delayMs === 0 ? handBack(msg) : msg.nak(delayMs)),
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

/** An outbox id as a header carries it (digits, within bigint), else nothing: a bad hint only costs the relays' path. */
function outboxId(value: string | undefined): string | undefined {
  return value && /^[1-9][0-9]{0,17}$/.test(value) ? value : undefined;
}

/** The server no longer has the consumer or its stream (e.g. it came back without its store). */
function isGone(err: unknown): boolean {
  if (err instanceof JetStreamApiError && err.status === 404) return true;
  return err instanceof Error && /(consumer|stream) not found/i.test(err.message);
}

/**
 * Pulls `agent.run.requested` from the runners' shared durable consumer with `concurrency` workers, each
 * asking for exactly one message when it is free: no message waits in a client buffer while its ack wait
 * runs out, so a busy runner never sits on work another runner could take. A lost connection is waited
 * out; a consumer (or stream) the server no longer has is provisioned again through `reprovision`.
 */
export async function startRunConsumer(
  deps: { nc: NatsConnection; names: BusNames; handle: RunRequestedHandler; logger: Logger; reprovision: () => Promise<void> },
  options: { concurrency: number; pullExpiresMs?: number },
): Promise<RunConsumer> {
  const js = jetstream(deps.nc);
  let stopping = false;
  let busy = 0;
  let pulling = 0;
  // While this runner stops, its pull requests still waiting at the server would receive what it hands back
  // (and hand it back again, spending a delivery each time): hand-backs wait until every pull has ended.
  const handBacks: JsMsg[] = [];
  const handBack = (msg: JsMsg) => {
    if (stopping && pulling > 0) handBacks.push(msg);
    else msg.nak(0);
  };
  const flushHandBacks = () => {
    if (pulling > 0) return;
    for (const msg of handBacks.splice(0)) msg.nak(0);
  };
  let current: { consumer: Consumer; maxDeliver: number } | null = null;
  let finding: Promise<{ consumer: Consumer; maxDeliver: number }> | null = null;

  async function find(): Promise<{ consumer: Consumer; maxDeliver: number }> {
    const consumer = await js.consumers.get(deps.names.commandStream, deps.names.runnerConsumer);
    const info = await consumer.info();
    const maxDeliver = info.config.max_deliver && info.config.max_deliver > 0 ? info.config.max_deliver : Number.MAX_SAFE_INTEGER;
    return { consumer, maxDeliver };
  }

  /** The consumer, found once and shared by the workers; found again after it was lost. */
  function consumer(): Promise<{ consumer: Consumer; maxDeliver: number }> {
    if (current) return Promise.resolve(current);
    finding ??= find()
      .catch(async (err) => {
        if (!isGone(err)) throw err;
        deps.logger.warn("the runners' consumer is gone from the server; provisioning it again");
        await deps.reprovision();
        return find();
      })
      .then((found) => (current = found))
      .finally(() => (finding = null));
    return finding;
  }

  async function worker(): Promise<void> {
    let failures = 0;
    while (!stopping) {
      let msg: JsMsg | null;
      let maxDeliver: number;
      try {
        const c = await consumer();
        maxDeliver = c.maxDeliver;
        pulling += 1;
        try {
          msg = await c.consumer.next({ expires: options.pullExpiresMs ?? 2000 });
        } finally {
          pulling -= 1;
          if (stopping) flushHandBacks();
        }
        failures = 0;
      } catch (err) {
        if (stopping) return;
        if (isGone(err)) current = null;
        failures += 1;
        if (failures === 1) deps.logger.warn({ error_class: (err as Error)?.name }, "pull failed; retrying");
        await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 100 * 2 ** Math.min(failures, 5))));
        continue;
      }
      if (!msg) continue;
      if (stopping) {
        handBack(msg);
        flushHandBacks();
        return;
      }
      busy += 1;
      try {
        await deps.handle(deliveryOf(msg, maxDeliver, deps.nc, deps.names, handBack));
      } catch (err) {
        deps.logger.error({ error_class: (err as Error)?.name }, "run handler failed");
        deps.logger.debug({ err }, "run handler failure detail");
        if (stopping) handBack(msg);
        else msg.nak(1000);
      } finally {
        busy -= 1;
      }
    }
  }

  await consumer().catch(() => undefined);
  const workers = Array.from({ length: options.concurrency }, () => worker());
  return {
    inFlight: () => busy,
    attached: () => current !== null && !deps.nc.isClosed(),
    async stop() {
      stopping = true;
      await Promise.allSettled(workers);
      flushHandBacks();
    },
  };
}

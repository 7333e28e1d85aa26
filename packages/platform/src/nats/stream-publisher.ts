import { JetStreamApiError, type PubAck } from "@nats-io/jetstream";
import { createInbox, headers as natsHeaders, type Msg, type NatsConnection } from "@nats-io/transport-node";
import { inboxPrefixOf } from "./connect";

/** One message for a stream: its subject, payload, headers and `Nats-Msg-Id` (JetStream drops a repeat within its window). */
export interface StreamMessage {
  readonly subject: string;
  readonly payload: string;
  readonly msgId: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** Publishes to JetStream and resolves with the stream's acknowledgement. */
export interface StreamPublisher {
  publish(message: StreamMessage): Promise<PubAck>;
  /** Publishes sent and not yet acknowledged. */
  readonly waiting: number;
}

/** No stream took the subject (none provisioned yet, none listens to it, or JetStream is off): nothing is wrong with the message. */
export class NoStreamError extends Error {
  constructor(readonly subject: string) {
    super(`no stream answered for ${subject}`);
    this.name = "NoStreamError";
  }
}

/** The stream did not acknowledge within the publisher's timeout. */
export class PublishTimeoutError extends Error {
  constructor(
    readonly subject: string,
    timeoutMs: number,
  ) {
    super(`no acknowledgement for ${subject} within ${timeoutMs} ms`);
    this.name = "PublishTimeoutError";
  }
}

/** The connection or the publisher's reply subscription closed before the acknowledgement came. */
export class PublisherClosedError extends Error {
  constructor(readonly subject: string) {
    super(`the connection closed before ${subject} was acknowledged`);
    this.name = "PublisherClosedError";
  }
}

/** What JetStream answers a publish: its acknowledgement, or an API error. */
interface AckReply {
  readonly stream?: string;
  readonly seq?: number;
  readonly duplicate?: boolean;
  readonly domain?: string;
  readonly error?: { readonly code: number; readonly err_code?: number; readonly description?: string };
}

/** JetStream's error code for an account without JetStream: answered like no stream at all. */
const NOT_ENABLED_FOR_ACCOUNT = 10039;

export interface StreamPublisherOptions {
  /** How long a publish waits for its acknowledgement, in ms. Default 5000 (nats.js's JetStream default). */
  readonly timeoutMs?: number;
}

/**
 * Publishes with acknowledgements over one reply subscription for all messages in flight: each publish costs a map
 * entry and a promise, and one timer sweeps the late ones. nats.js's `js.publish` makes a request object, a timer
 * and an Error per message (its `cancel` builds one even for a publish that succeeded). On a busy gateway those,
 * alive until the acknowledgement, were a quarter of what survived each young-generation collection
 * (docs/performance.md, "Design decisions and the measurements behind them"). What goes on the wire is the same:
 * the message with its headers and `Nats-Msg-Id`, a reply subject on the connection's inbox, JetStream's
 * acknowledgement back.
 */
export function createStreamPublisher(nc: NatsConnection, options: StreamPublisherOptions = {}): StreamPublisher {
  const timeoutMs = options.timeoutMs ?? 5000;
  /** By token, in the order sent: all wait the same time, so the first entry is always the next to expire. */
  const waiting = new Map<string, { subject: string; until: number; resolve(ack: PubAck): void; reject(err: Error): void }>();
  /** The reply subscription's subject prefix and the sweep's timer, while the subscription is open. */
  let replies: { prefix: string; sweep: NodeJS.Timeout } | null = null;
  let sent = 0;

  function sweep(): void {
    const now = performance.now();
    for (const [token, w] of waiting) {
      if (w.until > now) break;
      waiting.delete(token);
      w.reject(new PublishTimeoutError(w.subject, timeoutMs));
    }
  }

  function answered(prefix: string, msg: Msg): void {
    const token = msg.subject.slice(prefix.length);
    const w = waiting.get(token);
    if (!w) return; // timed out already
    waiting.delete(token);
    // "No responders": a status message with no data, sent by the server when nothing is subscribed to the subject.
    if (msg.data.length === 0 && msg.headers?.code === 503) return w.reject(new NoStreamError(w.subject));
    let reply: AckReply;
    try {
      reply = msg.json<AckReply>();
    } catch (err) {
      return w.reject(err as Error);
    }
    if (reply.error) {
      const { code, err_code = 0, description = "" } = reply.error;
      return w.reject(err_code === NOT_ENABLED_FOR_ACCOUNT ? new NoStreamError(w.subject) : new JetStreamApiError({ code, err_code, description }));
    }
    if (typeof reply.stream !== "string" || reply.stream === "" || typeof reply.seq !== "number") {
      return w.reject(new Error(`not a JetStream acknowledgement for ${w.subject}`));
    }
    w.resolve({ stream: reply.stream, seq: reply.seq, duplicate: reply.duplicate === true, ...(reply.domain ? { domain: reply.domain } : {}) });
  }

  /** The reply subscription, made on the first publish and again after one that closed. */
  function listening(): string {
    if (replies) return replies.prefix;
    const prefix = `${createInbox(inboxPrefixOf(nc))}.`;
    const sub = nc.subscribe(`${prefix}*`, { callback: (err, msg) => (err ? undefined : answered(prefix, msg)) });
    const current = { prefix, sweep: setInterval(sweep, Math.min(250, Math.max(10, timeoutMs / 4))) };
    current.sweep.unref();
    replies = current;
    const ended = () => {
      clearInterval(current.sweep);
      if (replies === current) replies = null;
      for (const [token, w] of waiting) {
        waiting.delete(token);
        w.reject(new PublisherClosedError(w.subject));
      }
    };
    void sub.closed.then(ended, ended);
    return prefix;
  }

  return {
    get waiting() {
      return waiting.size;
    },
    publish(message) {
      return new Promise<PubAck>((resolve, reject) => {
        const h = natsHeaders();
        for (const [k, v] of Object.entries(message.headers)) h.append(k, v);
        h.append("Nats-Msg-Id", message.msgId);
        const token = (sent++).toString(36);
        try {
          const prefix = listening();
          waiting.set(token, { subject: message.subject, until: performance.now() + timeoutMs, resolve, reject });
          nc.publish(message.subject, message.payload, { reply: prefix + token, headers: h });
        } catch (err) {
          // Refused before sending (over the server's payload limit, a bad subject or header, the connection closed).
          waiting.delete(token);
          reject(err as Error);
        }
      });
    },
  };
}

const shared = new WeakMap<NatsConnection, StreamPublisher>();

/** The connection's publisher, shared by everything that publishes on it (one reply subscription per connection). */
export function streamPublisherOf(nc: NatsConnection): StreamPublisher {
  let publisher = shared.get(nc);
  if (!publisher) shared.set(nc, (publisher = createStreamPublisher(nc)));
  return publisher;
}

import { connect, type NatsConnection } from "@nats-io/transport-node";

export type { NatsConnection };

/** Each connection's reply inbox prefix, as `connectNats` was given it. */
const inboxPrefixes = new WeakMap<NatsConnection, string>();

/** Where replies to the connection's requests arrive: its `inboxPrefix`, else nats.js's default (`_INBOX`). */
export function inboxPrefixOf(nc: NatsConnection): string | undefined {
  return inboxPrefixes.get(nc);
}

export interface NatsConnectOptions {
  /** Longest wait between two reconnect attempts, in ms. Default 2000. */
  maxReconnectDelayMs?: number;
  /** This service's NATS user and password (natsAuth); default: those of the first URL, if any. */
  user?: string;
  pass?: string;
  /** Where replies to this connection's requests arrive (its user may subscribe there only). Default `_INBOX`. */
  inboxPrefix?: string;
  /** Longest a connection attempt may take, from dialling to the server's first answer, in ms. Default 2000. */
  connectTimeoutMs?: number;
}

/**
 * Connects to NATS and stays connected: the first connection waits for a server that is not up yet, and a
 * lost connection is retried forever with a capped, jittered backoff, so neither a late start nor a restart
 * of nats-server takes the service down. Subscriptions are restored by the client after a reconnect. On a
 * cluster the client learns the other nodes from the seeds and moves to a live one when its node goes.
 */
export async function connectNats(url: string, name: string, options: NatsConnectOptions = {}): Promise<NatsConnection> {
  // One URL or a cluster's seeds, comma-separated; credentials and TLS are taken from the first.
  const seeds = url.split(",").map((part) => new URL(part.trim()));
  const first = seeds[0];
  const maxDelay = options.maxReconnectDelayMs ?? 2000;
  let attempt = 0;
  const nc = await connect({
    servers: seeds.map((s) => `${s.hostname}:${s.port || "4222"}`),
    user: options.user ?? (first.username ? decodeURIComponent(first.username) : undefined),
    pass: options.pass ?? (first.password ? decodeURIComponent(first.password) : undefined),
    ...(options.inboxPrefix ? { inboxPrefix: options.inboxPrefix } : {}),
    tls: first.protocol === "tls:" ? {} : undefined,
    name,
    waitOnFirstConnect: true,
    // A node on its way back from a restart may take the dial and say nothing: the client's default (20 s) kept a
    // gateway off the bus for 21 s after every node of a cluster restarted; the next node is tried instead.
    timeout: options.connectTimeoutMs ?? 2000,
    maxReconnectAttempts: -1,
    reconnectDelayHandler: () => {
      attempt += 1;
      return Math.min(maxDelay, 100 * 2 ** Math.min(attempt, 10)) * (0.75 + Math.random() * 0.5);
    },
    // A peer that vanished without closing the socket is noticed within ~15 s, not two minutes.
    pingInterval: 5000,
    maxPingOut: 3,
    // Async stack traces cost an Error per request on the hot path; our logs never show them.
    noAsyncTraces: true,
  });
  if (options.inboxPrefix) inboxPrefixes.set(nc, options.inboxPrefix);
  void (async () => {
    for await (const s of nc.status()) if (s.type === "reconnect") attempt = 0;
  })().catch(() => undefined);
  return nc;
}

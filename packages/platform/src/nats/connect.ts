import { connect, type NatsConnection } from "@nats-io/transport-node";

export type { NatsConnection };

/** Connects to NATS; keeps reconnecting forever so a restarted server does not take the service down. */
export async function connectNats(url: string, name: string): Promise<NatsConnection> {
  const parsed = new URL(url);
  return connect({
    servers: `${parsed.hostname}:${parsed.port || "4222"}`,
    user: parsed.username ? decodeURIComponent(parsed.username) : undefined,
    pass: parsed.password ? decodeURIComponent(parsed.password) : undefined,
    tls: parsed.protocol === "tls:" ? {} : undefined,
    name,
    maxReconnectAttempts: -1,
    // Async stack traces cost an Error per request on the hot path; our logs never show them.
    noAsyncTraces: true,
    reconnectTimeWait: 500,
  });
}

import type { NatsConnection } from "@nats-io/transport-node";
import { sqlStateOf } from "../../support/sql-state";
import { subscriptionEnd } from "../../support/subscription-end";
import { grpcClientOptions, loadGrpcTls, type ServiceIdentity } from "@steward/platform";
import { createToolExecApi, type ClientOptions } from "@steward/proto";
import type { Topology } from "./topology";

// Knocking on the doors of a topology from outside, as an intruder on its network would: each probe answers what
// happened, so that a spec can say what must (and, for the services themselves, what may) get through.

/** gRPC client options presenting `identity`'s certificate (from the topology's planes), or none at all. */
export function grpcAs(t: Topology, identity: ServiceIdentity | null, peer: ServiceIdentity): ClientOptions {
  if (!identity) return {};
  return grpcClientOptions(loadGrpcTls({ STEWARD_ENV: "production", ...t.planes.hostTls(identity) }, identity), peer);
}

/** tool-exec's catalogue asked with `options`: the tool names, or the gRPC status code of the refusal. */
export async function listToolsAs(t: Topology, options: ClientOptions): Promise<string[] | number> {
  const api = createToolExecApi(t.grpcAddr("tool-exec"), options);
  try {
    return (await api.listTools({ deadlineMs: 5000 })).tools.map((tool) => tool.name);
  } catch (err) {
    return (err as { code: number }).code;
  } finally {
    api.close();
  }
}

/** Connecting to NATS as `user` (null: nobody): "connected", or the server's refusal. */
export async function natsLogin(t: Topology, user: string | null, password?: string): Promise<string> {
  try {
    const nc = await t.connectNatsAs(user, password);
    await nc.close();
    return "connected";
  } catch (err) {
    return (err as Error).message;
  }
}

/** Subscribing to `subject` on `nc`: "allowed" once the server has taken it, or its permission refusal. */
export async function subscription(nc: NatsConnection, subject: string): Promise<string> {
  const sub = nc.subscribe(subject);
  const ended = subscriptionEnd(sub);
  // The server refuses a subscription with an error before it answers the PING a flush sends after it.
  await nc.flush();
  const outcome = await Promise.race([ended, nc.flush().then(() => "allowed")]);
  sub.unsubscribe();
  return outcome;
}

/** The SQLSTATE of `sql` run as `identity`'s own PostgreSQL role, or "ok". */
export const sqlAs = (t: Topology, identity: ServiceIdentity, sql: string): Promise<string> => sqlStateOf(t.roleUrl(identity), sql);

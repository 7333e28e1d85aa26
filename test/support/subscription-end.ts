import type { Subscription } from "@nats-io/transport-node";

/** How a NATS subscription ends: "message" at its first message, "ended", or the server's refusal (its message). */
export async function subscriptionEnd(sub: Subscription): Promise<string> {
  try {
    for await (const _m of sub) return "message";
    return "ended";
  } catch (err) {
    return (err as Error).message;
  }
}

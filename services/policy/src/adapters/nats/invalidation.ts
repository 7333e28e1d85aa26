import type { NatsConnection } from "@nats-io/transport-node";

/** The subject every PDP replica listens on for activations (core NATS: a message, not a stream). */
export function activationSubject(namespace: string): string {
  return `${namespace ? `${namespace}.` : ""}steward.policy.activated`;
}

/** Tells every replica that a tenant's active set changed. */
export async function announceActivation(nc: NatsConnection, namespace: string, tenantId: string, version: number): Promise<void> {
  nc.publish(activationSubject(namespace), JSON.stringify({ tenant_id: tenantId, version }));
  await nc.flush();
}

/** Calls `onActivated` for each activation any replica announces. */
export function listenForActivations(nc: NatsConnection, namespace: string, onActivated: (tenantId: string) => void): () => void {
  const sub = nc.subscribe(activationSubject(namespace), {
    callback: (err, msg) => {
      if (err) return;
      try {
        const { tenant_id } = msg.json<{ tenant_id: string }>();
        if (typeof tenant_id === "string") onActivated(tenant_id);
      } catch {
        // not ours
      }
    },
  });
  return () => sub.unsubscribe();
}

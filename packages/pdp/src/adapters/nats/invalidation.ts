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

/**
 * Activations over a NATS connection that may not exist yet: the PDP serves decisions without NATS (they
 * need only PostgreSQL), so it starts before NATS answers. Listeners subscribe once `attach` is called;
 * an announcement made meanwhile is skipped (replicas re-read the active set within its cache age anyway).
 */
export function deferredActivations(namespace: string, onSkipped: () => void) {
  let nc: NatsConnection | undefined;
  const waiting: Array<{ onActivated: (tenantId: string) => void; stop?: () => void; closed: boolean }> = [];
  return {
    attach(connection: NatsConnection): void {
      nc = connection;
      for (const w of waiting) if (!w.closed) w.stop = listenForActivations(connection, namespace, w.onActivated);
    },
    async announce(tenantId: string, version: number): Promise<void> {
      if (!nc) return onSkipped();
      await announceActivation(nc, namespace, tenantId, version);
    },
    listen(onActivated: (tenantId: string) => void): () => void {
      const w: { onActivated: (tenantId: string) => void; stop?: () => void; closed: boolean } = { onActivated, closed: false };
      if (nc) w.stop = listenForActivations(nc, namespace, onActivated);
      else waiting.push(w);
      return () => {
        w.closed = true;
        w.stop?.();
      };
    },
  };
}

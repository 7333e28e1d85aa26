import type { NatsConnection } from "@nats-io/transport-node";
import type { Readiness } from "./readiness";

/** What one live service instance says of itself when the status route asks. */
export interface InstanceStatus {
  readonly service: string;
  readonly instance: string;
  readonly ready: boolean;
  readonly reasons: readonly string[];
  readonly started_at: string;
  readonly [more: string]: unknown;
}

/**
 * Answers the status ping (core NATS request, every instance replies) with this instance's readiness and
 * whatever `more` adds (a runner's runs in hand). Nothing secret goes in: names, counts, reasons.
 */
export function answerStatusPings(
  nc: NatsConnection,
  subject: string,
  self: { service: string; instance: string; readiness: Readiness; more?: () => Record<string, unknown> },
): () => void {
  const startedAt = new Date().toISOString();
  const sub = nc.subscribe(subject, {
    callback: (err, msg) => {
      if (err || !msg.reply) return;
      void self.readiness.report().then((r) => {
        const status: InstanceStatus = {
          service: self.service,
          instance: self.instance,
          ready: r.ready,
          reasons: r.reasons,
          started_at: startedAt,
          ...(self.more?.() ?? {}),
        };
        msg.respond(JSON.stringify(status));
      });
    },
  });
  return () => sub.unsubscribe();
}

import { decodeRunRequested } from "@steward/contract";
import type { Logger, Pool } from "@steward/platform";
import { claimRun, extendLease, releaseLease } from "@steward/store";
import { driveRun, type DriveDeps } from "./drive-run";

/** A delivered command as the handler sees it: no JetStream types, so it can be driven by a fake. */
export interface Delivery {
  readonly data: Uint8Array;
  readonly deliveryCount: number;
  readonly maxDeliver: number;
  readonly traceparent?: string;
  ack(): void;
  nak(delayMs: number): void;
  /** Permanent failure: never redelivered. */
  term(reason: string): void;
  working(): void;
  deadLetter(reason: string): Promise<void>;
}

export interface HandlerOptions {
  /** Lease on a claimed run, in ms; extended every third of it while the run is driven. Default 30 000. */
  leaseMs?: number;
  /** First redelivery delay after a retryable failure, in ms; doubles per delivery up to 30 s. Default 1000. */
  retryBackoffMs?: number;
}

/** Redelivery delay for a retryable failure: grows with each delivery, capped at 30 s. */
export function backoffMs(deliveryCount: number, baseMs = 1000): number {
  return Math.min(30_000, baseMs * 2 ** Math.max(0, deliveryCount - 1));
}

/**
 * One `agent.run.requested` delivery: strict decode (else dead-letter + term), claim the run's lease (else
 * wait for the holder), drive it, and answer the bus: ack when it ended, nak with backoff when it must retry.
 */
export function createRunRequestedHandler(deps: DriveDeps & { pool: Pool; logger: Logger }, options: HandlerOptions = {}) {
  const leaseMs = options.leaseMs ?? 30_000;
  const retryMs = (delivery: Delivery) => backoffMs(delivery.deliveryCount, options.retryBackoffMs ?? 1000);
  return async function handle(delivery: Delivery): Promise<void> {
    const decoded = decodeRunRequested(delivery.data);
    if (!decoded.ok) {
      deps.logger.warn({ reason: decoded.reason }, "poison run.requested; dead-lettered");
      await delivery.deadLetter(decoded.reason);
      delivery.term(decoded.reason);
      return;
    }
    const cmd = decoded.value;
    deps.logger.debug({ run_id: cmd.run_id, delivery: delivery.deliveryCount }, "run requested");
    const claim = await claimRun(deps.pool, cmd.run_id, deps.runnerId, leaseMs);
    deps.logger.debug({ run_id: cmd.run_id, claim: claim.kind }, "claim");
    if (claim.kind === "finished") return delivery.ack();
    if (claim.kind === "held") return delivery.nak(claim.retryInMs);
    if (claim.kind === "missing") {
      const reason = "run does not exist";
      await delivery.deadLetter(reason);
      delivery.term(reason);
      return;
    }
    const abort = new AbortController();
    const keepAlive = setInterval(() => {
      delivery.working();
      extendLease(deps.pool, cmd.run_id, deps.runnerId, leaseMs)
        .then((held) => {
          if (!held) abort.abort();
        })
        .catch(() => undefined);
    }, Math.floor(leaseMs / 3));
    try {
      const outcome = await driveRun(deps, {
        runId: cmd.run_id,
        tenantId: cmd.tenant_id,
        userId: cmd.created_by,
        elevationSessionId: cmd.elevation_session_id,
        traceparent: delivery.traceparent,
        lastDelivery: delivery.deliveryCount >= delivery.maxDeliver,
        signal: abort.signal,
        heartbeat: () => delivery.working(),
      });
      // An open breaker knows when the provider is worth asking again; waiting less would waste a delivery.
      if (outcome.kind === "retry") delivery.nak(Math.max(retryMs(delivery), outcome.afterMs ?? 0));
      else delivery.ack();
    } catch (err) {
      deps.logger.warn({ run_id: cmd.run_id, error_class: (err as Error)?.name, delivery: delivery.deliveryCount }, "run interrupted; will retry");
      deps.logger.debug({ err, run_id: cmd.run_id }, "run interruption detail");
      delivery.nak(retryMs(delivery));
    } finally {
      clearInterval(keepAlive);
      await releaseLease(deps.pool, cmd.run_id, deps.runnerId).catch(() => undefined);
    }
  };
}

export type RunRequestedHandler = ReturnType<typeof createRunRequestedHandler>;

import { decodeRunRequested, type RunRequested } from "@steward/contract";
import { ConcurrencyError, isPostgresUnavailable, type Logger, type Pool } from "@steward/platform";
import { admitDeferred, batchedAdmissions, claimRun, endDrive, failUnfoldableRun } from "@steward/store";
import { driveRun, type DriveDeps } from "./drive-run";
import type { LeaseKeeper } from "./lease-keeper";
import { UnfoldableRunError } from "./unfoldable-run";

/** A delivered command as the handler sees it: no JetStream types, so it can be driven by a fake. */
export interface Delivery {
  readonly data: Uint8Array;
  readonly deliveryCount: number;
  readonly maxDeliver: number;
  readonly traceparent?: string;
  /** The command's `Steward-Published-Through`: the run's outbox rows up to this id were on the bus before it. */
  readonly publishedThrough?: string;
  /** The command of a run just created (`NEW_RUN_HEADER`): its admission is asked for first. */
  readonly newRun?: boolean;
  ack(): void;
  nak(delayMs: number): void;
  /** Permanent failure: never redelivered. */
  term(reason: string): void;
  working(): void;
  deadLetter(reason: string): Promise<void>;
}

export interface HandlerOptions {
  /** Lease on a claimed run, in ms; the lease keeper extends it while the run is driven. Default 2000. */
  leaseMs?: number;
  /** First redelivery delay after a retryable failure, in ms; doubles per delivery up to 30 s. Default 1000. */
  retryBackoffMs?: number;
  /** On shutdown, how long a step in hand may still take before it is aborted and handed back, in ms. Default 5000. */
  shutdownGraceMs?: number;
  /** Runs of one tenant in flight at once, across all runners (fair share); more wait, deferred. Default: no limit. */
  tenantMaxRunning?: number;
}

/** Redelivery delay for a retryable failure: grows with each delivery, capped at 30 s. */
export function backoffMs(deliveryCount: number, baseMs = 1000): number {
  return Math.min(30_000, baseMs * 2 ** Math.max(0, deliveryCount - 1));
}

/**
 * One `agent.run.requested` delivery: strict decode (else dead-letter + term), claim the run's lease (else
 * wait for the holder), drive it, and answer the bus: ack when it ended, nak with backoff when it must retry.
 */
export function createRunRequestedHandler(
  deps: DriveDeps & { pool: Pool; logger: Logger; leases: LeaseKeeper; shutdown?: AbortSignal },
  options: HandlerOptions = {},
) {
  const leaseMs = options.leaseMs ?? 2000;
  const retryMs = (delivery: Delivery) => backoffMs(delivery.deliveryCount, options.retryBackoffMs ?? 1000);
  const shutdown = deps.shutdown ?? new AbortController().signal;
  const shutdownGraceMs = options.shutdownGraceMs ?? 5000;
  // A tenant's runs asked for at once (a burst) are admitted together: one lock and one commit, not one each.
  const admissions = batchedAdmissions(deps.pool);
  async function handle(delivery: Delivery): Promise<void> {
    const decoded = decodeRunRequested(delivery.data);
    if (!decoded.ok) {
      deps.logger.warn({ reason: decoded.reason }, "poison run.requested; dead-lettered");
      await delivery.deadLetter(decoded.reason);
      delivery.term(decoded.reason);
      return;
    }
    const cmd = decoded.value;
    // PostgreSQL gone away is no reason to spend one of the command's deliveries: keep the command in hand
    // (working) and try again once the server answers, so an outage never exhausts max_deliver.
    for (let attempt = 0; ; attempt++) {
      try {
        return await handleOnce(delivery, cmd);
      } catch (err) {
        if (!isPostgresUnavailable(err) || shutdown.aborted) throw err;
        if (attempt === 0) deps.logger.warn({ run_id: cmd.run_id }, "PostgreSQL unavailable; holding the run until it answers");
        await pause(Math.min(5000, 250 * 2 ** Math.min(attempt, 5)), delivery);
      }
    }
  }

  /** Waits `ms`, telling the bus the command is still in hand; cut short by shutdown. */
  function pause(ms: number, delivery: Delivery): Promise<void> {
    delivery.working();
    return new Promise((resolve) => {
      const beat = setInterval(() => delivery.working(), 1000);
      const done = () => {
        clearInterval(beat);
        clearTimeout(timer);
        shutdown.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      shutdown.addEventListener("abort", done, { once: true });
    });
  }

  /**
   * A run whose stored events cannot be folded (corrupt, out of order) would fail alike on every delivery: it
   * is failed at once with 60302 instead. True when it has ended; false when the run moved meanwhile (another
   * writer appended first), and the delivery is retried as usual.
   */
  async function failedAsUnfoldable(err: UnfoldableRunError, cmd: RunRequested, traceparent?: string): Promise<boolean> {
    try {
      await failUnfoldableRun(deps.pool, {
        runId: cmd.run_id,
        tenantId: cmd.tenant_id,
        namespace: deps.namespace,
        traceparent,
      });
    } catch (failure) {
      if (isPostgresUnavailable(failure)) throw failure;
      if (!(failure instanceof ConcurrencyError))
        deps.logger.warn({ run_id: cmd.run_id, error_class: (failure as Error)?.name }, "could not fail an unfoldable run");
      return false;
    }
    const reason = err.cause as Error | undefined;
    deps.logger.error({ run_id: cmd.run_id, error_class: reason?.name, detail: reason?.message }, "the run's events cannot be folded; failed with 60302");
    return true;
  }

  /** The runs this runner is claiming or driving now, one delivery each. */
  const inHand = new Set<string>();

  async function handleOnce(delivery: Delivery, cmd: RunRequested): Promise<void> {
    // A runner on its way out takes nothing new: the command goes straight back for another runner.
    if (shutdown.aborted) return delivery.nak(0);
    // Another delivery of a run this runner has in hand (the first one's ack wait ran out while its claim waited):
    // its lease is this runner's, so the claim would let a second loop drive the run beside the first, asking the
    // model twice for each step. Asked again later; by then the run has ended or is handed back.
    if (inHand.has(cmd.run_id)) {
      deps.logger.info({ run_id: cmd.run_id, delivery: delivery.deliveryCount }, "run already in hand here; asking again later");
      return delivery.nak(retryMs(delivery));
    }
    inHand.add(cmd.run_id);
    let answer: () => void;
    try {
      answer = await claimAndDrive(delivery, cmd);
    } finally {
      inHand.delete(cmd.run_id);
    }
    answer();
  }

  /**
   * Claims and drives the run. The answer to the bus (ack, nak or term) is returned, not given: it is given once
   * the run is out of hand here and its lease released, so that a redelivery after a short backoff finds the run
   * free instead of bouncing off this runner's own hold and spending one of the command's deliveries.
   */
  async function claimAndDrive(delivery: Delivery, cmd: RunRequested): Promise<() => void> {
    deps.logger.debug({ run_id: cmd.run_id, delivery: delivery.deliveryCount }, "run requested");
    const admission = options.tenantMaxRunning ? { tenantId: cmd.tenant_id, maxRunning: options.tenantMaxRunning, admissions } : undefined;
    const claim = await claimRun(deps.pool, cmd.run_id, deps.runnerId, leaseMs, admission, { newRun: delivery.newRun && delivery.deliveryCount === 1 });
    deps.logger.debug({ run_id: cmd.run_id, claim: claim.kind }, "claim");
    // Deferred: the run waits in PostgreSQL for a place of its tenant; the command is done with.
    if (claim.kind === "finished" || claim.kind === "deferred") return () => delivery.ack();
    if (claim.kind === "held") {
      // Rare (a redelivery while another runner's lease still runs): said at info, so a slow takeover explains itself.
      deps.logger.info({ run_id: cmd.run_id, delivery: delivery.deliveryCount, retry_in_ms: claim.retryInMs }, "run held by another runner; asking again");
      return () => delivery.nak(claim.retryInMs);
    }
    if (claim.kind === "missing") {
      const reason = "run does not exist";
      await delivery.deadLetter(reason);
      return () => delivery.term(reason);
    }
    if (delivery.deliveryCount > 1) deps.logger.info({ run_id: cmd.run_id, delivery: delivery.deliveryCount }, "run resumed from its events");
    const lost = new AbortController();
    const release = deps.leases.hold(cmd.run_id, { working: () => delivery.working(), onLost: () => lost.abort() });
    // Handing back on shutdown: the drive stops at its next step boundary; a step still in hand after the
    // grace (a long model call) is aborted. Plain controllers with listeners removed at the end:
    // AbortSignal.any on the process-wide shutdown signal would leave a reference on it per run (Node 20).
    const drive = new AbortController();
    const stopping = new AbortController();
    let grace: NodeJS.Timeout | undefined;
    const stopDrive = () => drive.abort();
    const stopSoon = () => {
      stopping.abort();
      grace = setTimeout(stopDrive, shutdownGraceMs);
    };
    lost.signal.addEventListener("abort", stopDrive, { once: true });
    shutdown.addEventListener("abort", stopSoon, { once: true });
    const signal = drive.signal;
    const handBack = () => shutdown.aborted && !lost.signal.aborted;
    let ended = false;
    let answer: () => void;
    try {
      const outcome = await driveRun(deps, {
        runId: cmd.run_id,
        tenantId: cmd.tenant_id,
        userId: cmd.created_by,
        elevationSessionId: cmd.elevation_session_id,
        traceparent: delivery.traceparent,
        lastDelivery: delivery.deliveryCount >= delivery.maxDeliver,
        firstDelivery: delivery.deliveryCount === 1,
        publishedThrough: delivery.publishedThrough,
        events: claim.events,
        signal,
        stopping: stopping.signal,
      });
      ended = outcome.kind === "finished";
      if (outcome.kind === "lost" && handBack()) answer = () => delivery.nak(0);
      // An open breaker knows when the provider is worth asking again; waiting less would waste a delivery.
      else if (outcome.kind === "retry") answer = () => delivery.nak(Math.max(retryMs(delivery), outcome.afterMs ?? 0));
      else answer = () => delivery.ack();
    } catch (err) {
      if (handBack()) {
        answer = () => delivery.nak(0);
      } else if (isPostgresUnavailable(err)) {
        throw err;
      } else if (err instanceof UnfoldableRunError && (await failedAsUnfoldable(err, cmd, delivery.traceparent))) {
        answer = () => delivery.ack();
      } else {
        deps.logger.warn({ run_id: cmd.run_id, error_class: (err as Error)?.name, delivery: delivery.deliveryCount }, "run interrupted; will retry");
        deps.logger.debug({ err, run_id: cmd.run_id }, "run interruption detail");
        answer = () => delivery.nak(retryMs(delivery));
      }
    } finally {
      shutdown.removeEventListener("abort", stopSoon);
      clearTimeout(grace);
      release();
      // The run ended, waits for a person, or went back: a place of its tenant may be free for a deferred run.
      const after = await endDrive(deps.pool, { runId: cmd.run_id, owner: deps.runnerId, ended, tenantId: admission?.tenantId }).catch(() => null);
      if (admission && after?.deferredWaiting)
        await admitDeferred(deps.pool, deps.namespace, cmd.tenant_id, admission.maxRunning, { probed: true }).catch(() => undefined);
    }
    return answer;
  }

  return handle;
}

export type RunRequestedHandler = ReturnType<typeof createRunRequestedHandler>;

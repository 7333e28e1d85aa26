import type { StoredRunEvent } from "@steward/contract";

/** What a driven run knows of its delivery, without any JetStream type (so the loop is testable with a fake). */
export interface RunContext {
  readonly runId: string;
  readonly tenantId: string;
  readonly userId: string;
  readonly elevationSessionId?: string;
  readonly traceparent?: string;
  /** True on the last delivery JetStream will make: a retryable failure must now end the run. */
  readonly lastDelivery: boolean;
  /**
   * True on a command's first delivery: every earlier event of the run is on the bus (its command went out
   * after them), so the loop may publish its own events directly. A redelivery may follow a runner that died
   * with its events still held.
   */
  readonly firstDelivery?: boolean;
  /**
   * The run's outbox rows up to this id are on the bus, marked published or not (the command's writer published
   * them before it): they do not keep the loop from publishing its own events directly.
   */
  readonly publishedThrough?: string;
  /** The run's events as its claim read them (the same statement): the loop starts from them without a read. */
  readonly events?: readonly StoredRunEvent[];
  readonly signal: AbortSignal;
  /** Asks the loop to stop at its next step boundary (shutdown): the step in hand is finished, not aborted. */
  readonly stopping?: AbortSignal;
}

/** How a drive ended: the run is over (or another runner has it), or it must be retried on a later delivery. */
export type DriveOutcome = { readonly kind: "finished" | "lost" | "missing" | "waiting" } | { readonly kind: "retry"; readonly afterMs?: number };

import type { PublishFailure } from "./publish-failure";

/** One outbox row of a batch, after its publish was tried. */
export interface AttemptedRow {
  readonly id: number;
  readonly subject: string;
  /** Failed attempts before this one. */
  readonly attempts: number;
  readonly failure: PublishFailure | null;
}

export interface RetryPolicy {
  /** Attempts after which a refused message is set aside. */
  readonly maxAttempts: number;
  /** Pause before the second attempt, in ms; doubles with each attempt up to `retryMaxMs`. */
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
}

/**
 * A row to try again later: its run's later rows wait behind it until then.
 * - `refused`: NATS refused the message; counted, and set aside for good at the last attempt.
 * - `unanswered`: no stream answered for its subject (none takes it, or its stream has no leader just now);
 *   not counted, since nothing is wrong with the message, and never set aside.
 */
export interface RetriedRow {
  readonly kind: "refused" | "unanswered";
  readonly id: number;
  readonly subject: string;
  readonly attempts: number;
  readonly reason: string;
  readonly setAside: boolean;
  readonly retryInMs: number;
}

/** What the relay writes back for a batch. */
export interface Settlement {
  readonly published: number[];
  readonly retried: RetriedRow[];
  /** A row failed because the bus is away: it stays as it was, and the batch tries nothing more. */
  readonly outage: boolean;
}

/**
 * Decides what each tried row becomes: a published row is marked; a refused one is counted with a backoff (set
 * aside at its last attempt); one no stream answered for waits a pause, uncounted; one that met the bus away is
 * left as it was. The relay tries a run's rows one after the other, each once the one before it is on the
 * stream, so a row that failed is the last of its run that was tried.
 */
export function settleBatch(rows: readonly AttemptedRow[], policy: RetryPolicy): Settlement {
  const published: number[] = [];
  const retried: RetriedRow[] = [];
  let outage = false;
  for (const row of rows) {
    const failure = row.failure;
    if (!failure) {
      published.push(row.id);
    } else if (failure.kind === "refused") {
      const attempts = row.attempts + 1;
      retried.push({
        kind: "refused",
        id: row.id,
        subject: row.subject,
        attempts,
        reason: failure.reason,
        setAside: attempts >= policy.maxAttempts,
        retryInMs: Math.min(policy.retryMaxMs, policy.retryBaseMs * 2 ** (attempts - 1)),
      });
    } else if (failure.noResponders) {
      retried.push({
        kind: "unanswered",
        id: row.id,
        subject: row.subject,
        attempts: row.attempts,
        reason: `no JetStream stream answered for subject ${row.subject}`,
        setAside: false,
        retryInMs: policy.retryBaseMs,
      });
    } else {
      outage = true;
    }
  }
  return { published, retried, outage };
}

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

/** A refused row: counted, and either due again after `retryInMs` or set aside for good. */
export interface RefusedRow {
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
  readonly refused: RefusedRow[];
  /** Rows from the first outage on: left as they were, tried again in order once the bus is back. */
  readonly untouched: number;
}

/**
 * Decides, in row order, what each tried row becomes. A published row is marked; a refused one is counted
 * (set aside at the last attempt) and does not stop the rows behind it; the first outage stops the batch
 * there, uncounted, so that a bus that is away keeps every row in order. "No responders" while a later row of
 * the batch went through is not the bus being away: no stream takes that subject, and it counts as refused.
 */
export function settleBatch(rows: readonly AttemptedRow[], policy: RetryPolicy): Settlement {
  let lastPublished = -1;
  rows.forEach((row, i) => {
    if (!row.failure) lastPublished = i;
  });
  const published: number[] = [];
  const refused: RefusedRow[] = [];
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    const failure = row.failure;
    if (!failure) {
      published.push(row.id);
      continue;
    }
    let reason: string;
    if (failure.kind === "refused") reason = failure.reason;
    else if (failure.noResponders && i < lastPublished) reason = `no JetStream stream takes subject ${row.subject}`;
    else return { published, refused, untouched: rows.length - i };
    const attempts = row.attempts + 1;
    refused.push({
      id: row.id,
      subject: row.subject,
      attempts,
      reason,
      setAside: attempts >= policy.maxAttempts,
      retryInMs: Math.min(policy.retryMaxMs, policy.retryBaseMs * 2 ** (attempts - 1)),
    });
  }
  return { published, refused, untouched: 0 };
}

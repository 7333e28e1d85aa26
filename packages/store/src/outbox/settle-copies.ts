import type { PublishFailure } from "./publish-failure";
import { settleBatch, type RetriedRow, type RetryPolicy } from "./settle-batch";
import type { ClaimedRow } from "./run-order";

/** What a relay writes back to a run's row for the copies of it that it tried. */
export interface RunSettlement {
  readonly runId: string;
  /** Every event of the run up to this version is on the bus (or set aside). */
  readonly publishedVersion: number;
  /** Refusals counted for the run's first unpublished event. */
  readonly attempts: number;
  /** When to try that event again, in ms from now; null: whenever due. */
  readonly retryInMs: number | null;
}

/** A copy NATS refused for the last time: kept in the outbox, set aside with its reason, never sent. */
export interface SetAsideCopy {
  readonly row: ClaimedRow;
  readonly attempts: number;
  readonly reason: string;
}

export interface CopiesSettlement {
  readonly runs: RunSettlement[];
  readonly setAside: SetAsideCopy[];
  /** To report, as an outbox row's would be (`id`: the copy's version). */
  readonly retried: (RetriedRow & { readonly runId: string })[];
  readonly outage: boolean;
}

/**
 * The copies a relay tried, settled per run as `settleBatch` settles outbox rows: a run's copies were tried in
 * version order, each after the one before it was on the stream, so those on it are a prefix and the first
 * failure (refused: counted with a backoff, set aside at its last attempt; unanswered: a pause, uncounted; the
 * bus away: left as it was) is the run's first unpublished event.
 */
export function settleCopies(tried: readonly { row: ClaimedRow; failure: PublishFailure | null }[], policy: RetryPolicy): CopiesSettlement {
  const settled = settleBatch(
    tried.map(({ row, failure }, i) => ({ id: i, subject: row.subject, attempts: row.attempts, failure })),
    policy,
  );
  const byRun = new Map<string, { publishedVersion: number; attempts: number; retryInMs: number | null }>();
  const at = (i: number) => tried[i].row;
  for (const i of settled.published) {
    const row = at(i);
    const run = byRun.get(row.run_id!);
    if (!run || run.publishedVersion < row.version!) byRun.set(row.run_id!, { publishedVersion: row.version!, attempts: 0, retryInMs: null });
  }
  const setAside: SetAsideCopy[] = [];
  for (const r of settled.retried) {
    const row = at(r.id);
    const before = byRun.get(row.run_id!)?.publishedVersion ?? row.version! - 1;
    if (r.setAside) {
      setAside.push({ row, attempts: r.attempts, reason: r.reason });
      byRun.set(row.run_id!, { publishedVersion: row.version!, attempts: 0, retryInMs: null });
    } else {
      byRun.set(row.run_id!, { publishedVersion: before, attempts: r.attempts, retryInMs: r.retryInMs });
    }
  }
  return {
    runs: [...byRun].map(([runId, s]) => ({ runId, ...s })),
    setAside,
    retried: settled.retried.map((r) => ({ ...r, id: at(r.id).version!, runId: at(r.id).run_id! })),
    outage: settled.outage,
  };
}

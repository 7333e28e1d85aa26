import type { Pool } from "pg";
import type { StoredRunEvent } from "@steward/contract";
import { preparedStatement } from "@steward/platform";
import { EVENT_COLUMNS, rowToEvent, type EventRow } from "../event-store/read-stream";
import { admitRun } from "./admission";
import type { Admissions } from "./admission-batches";

export type ClaimOutcome =
  /** Claimed; with the run's events when they were read by the claim's own statement (no second round trip). */
  | { readonly kind: "claimed"; readonly events?: StoredRunEvent[] }
  | { readonly kind: "finished" }
  | { readonly kind: "missing" }
  | { readonly kind: "held"; readonly retryInMs: number }
  /** Its tenant has no place for another run now: it stays queued and is admitted when a place frees. */
  | { readonly kind: "deferred" };

/**
 * On the way from a run's command to its run.started, so prepared and one round trip: the claim, and when it
 * succeeds the run's events in order (one row with no event when the claimed run has none); no row: not claimed.
 */
const claimStatement = preparedStatement(
  "steward.claim_run",
  `WITH claimed AS (
     UPDATE runs SET lease_owner = $2, lease_until = clock_timestamp() + make_interval(secs => $3),
            admitted_at = coalesce(admitted_at, clock_timestamp())
      WHERE id = $1 AND state NOT IN ('succeeded', 'failed', 'cancelled')
        AND (lease_owner IS NULL OR lease_owner = $2 OR lease_until < clock_timestamp())
        AND ($4 OR admitted_at IS NOT NULL OR state <> 'queued')
     RETURNING id)
   SELECT ${EVENT_COLUMNS} FROM claimed LEFT JOIN events ON stream_id = claimed.id ORDER BY version`,
);

/** A tenant's limit on runs in flight, and the admissions that decide a run's place (default: one statement each). */
export interface ClaimAdmission {
  readonly tenantId: string;
  readonly maxRunning: number;
  readonly admissions?: Admissions;
}

/**
 * Claims a run for one runner: succeeds when nobody holds it, the holder's lease has expired, or the caller
 * already holds it. The lease must be extended while the run is driven; a dead holder's lease runs out.
 * With `admission`, a queued run not admitted yet is admitted first (at most `maxRunning` of its tenant's
 * runs in flight, see admission.ts) or deferred. A run claimed at once comes with its events, read in the same
 * statement (the caller folds them instead of reading the stream again).
 */
export async function claimRun(
  pool: Pool,
  runId: string,
  owner: string,
  leaseMs: number,
  admission?: ClaimAdmission,
  hint: { readonly newRun?: boolean } = {},
): Promise<ClaimOutcome> {
  const admit = async (): Promise<ClaimOutcome | null> => {
    if (!admission) return null;
    const input = { runId, tenantId: admission.tenantId, owner, leaseMs, maxRunning: admission.maxRunning };
    const admitted = admission.admissions ? await admission.admissions.admit(input) : await admitRun(pool, input);
    if (admitted.kind === "admitted") return { kind: "claimed", events: admitted.events };
    if (admitted.kind === "deferred") return { kind: "deferred" };
    return null;
  };
  // A run just created (its command says so, NEW_RUN_HEADER) waits for its admission: asked first, one round
  // trip. A wrong hint costs that round trip and nothing else: the claim follows as usual.
  const admittedFirst = hint.newRun ? await admit() : null;
  if (admittedFirst) return admittedFirst;
  const claimed = await pool.query<EventRow>(claimStatement([runId, owner, leaseMs / 1000, !admission]));
  // A claimed run without events answers one row of nulls (the outer join).
  if (claimed.rows.length > 0) return { kind: "claimed", events: claimed.rows.filter((r) => r.event_id !== null).map(rowToEvent) };
  // Not claimable as it is: a run waiting for its tenant's admission, or one held or ended.
  const admitted = hint.newRun ? null : await admit();
  if (admitted) return admitted;
  const { rows } = await pool.query<{ state: string; wait_ms: number | null }>(
    `SELECT state, greatest(0, extract(epoch FROM lease_until - clock_timestamp()) * 1000)::int AS wait_ms
       FROM runs WHERE id = $1`,
    [runId],
  );
  if (!rows[0]) return { kind: "missing" };
  if (["succeeded", "failed", "cancelled"].includes(rows[0].state)) return { kind: "finished" };
  return { kind: "held", retryInMs: Math.max(100, rows[0].wait_ms ?? 0) };
}

/** Extends the caller's lease; false when it was lost (expired and taken by another runner). */
export async function extendLease(pool: Pool, runId: string, owner: string, leaseMs: number): Promise<boolean> {
  const r = await pool.query(
    `UPDATE runs SET lease_until = clock_timestamp() + make_interval(secs => $3)
      WHERE id = $1 AND lease_owner = $2`,
    [runId, owner, leaseMs / 1000],
  );
  return r.rowCount === 1;
}

/**
 * Extends every lease `owner` holds on `runIds` in one statement (one round trip per heartbeat, however many
 * runs are in hand); resolves with the runs another runner holds now — taken over. A run nobody holds any more
 * has ended (its last event clears the lease) and is not counted as lost. The rows are locked in id order, as the
 * marks and the runner's appends written together (`appendRuns`) take them: none waits for another in a cycle.
 */
export async function extendLeases(pool: Pool, owner: string, runIds: readonly string[], leaseMs: number): Promise<Set<string>> {
  if (runIds.length === 0) return new Set();
  const { rows } = await pool.query<{ id: string }>(
    `WITH locked AS (SELECT id FROM runs WHERE id = ANY($1::uuid[]) AND lease_owner = $2 ORDER BY id FOR NO KEY UPDATE),
     kept AS (
       UPDATE runs SET lease_until = clock_timestamp() + make_interval(secs => $3)
        WHERE id IN (SELECT id FROM locked) AND lease_owner = $2
     )
     SELECT id::text FROM runs WHERE id = ANY($1::uuid[]) AND lease_owner <> $2`,
    [runIds, owner, leaseMs / 1000],
  );
  return new Set(rows.map((r) => r.id));
}

/** The runner holding the run's lease now, or null: nobody (an ended run, one handed back). */
export async function leaseHolder(pool: Pool, runId: string): Promise<string | null> {
  const { rows } = await pool.query<{ lease_owner: string | null }>("SELECT lease_owner FROM runs WHERE id = $1", [runId]);
  return rows[0]?.lease_owner ?? null;
}

/** Once per run a runner drives: prepared. */
const releaseStatement = preparedStatement(
  "steward.release_lease",
  "UPDATE runs SET lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2",
);

/** Gives the run up so that another runner may take it at once. */
export async function releaseLease(pool: Pool, runId: string, owner: string): Promise<void> {
  await pool.query(releaseStatement([runId, owner]));
}

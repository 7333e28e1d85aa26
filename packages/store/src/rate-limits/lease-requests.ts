import type { Pool } from "pg";

/** A replica asks for `want` more requests of `bucket`'s current window, whose size is `capacity`. */
export interface LeaseWant {
  readonly bucket: string;
  readonly capacity: number;
  readonly want: number;
}

/** What the shared counter gave: `granted` of the want (0 when the window is spent), `leased` in all so far. */
export interface LeaseGrant {
  readonly bucket: string;
  readonly granted: number;
  readonly leased: number;
  readonly capacity: number;
  /** The window's start on the database's clock (ms since the epoch): it names the window. */
  readonly windowStartMs: number;
  /** Milliseconds from now until the window ends (and a new one begins, empty). */
  readonly windowEndsInMs: number;
}

/**
 * One statement for every bucket of a request. A bucket's window starts with the first lease after the last
 * one ended (so buckets do not all reset at the same moment) and lasts `windowSeconds` on the database's clock,
 * which every replica shares; each lease gets what is left of its want. Rows are written in bucket order so
 * that two replicas leasing the same buckets never deadlock.
 */
const LEASE = `
WITH now AS (SELECT clock_timestamp() AS t)
INSERT INTO rate_limit_buckets AS b (bucket, window_start, leased, granted, capacity)
SELECT r.bucket, now.t, LEAST(r.want, r.capacity), LEAST(r.want, r.capacity), r.capacity
  FROM unnest($1::text[], $2::int[], $3::int[]) AS r(bucket, capacity, want), now
 ORDER BY r.bucket
ON CONFLICT (bucket) DO UPDATE SET
  granted = CASE WHEN b.window_start > excluded.window_start - make_interval(secs => $4)
                 THEN GREATEST(0, LEAST(excluded.granted, excluded.capacity - b.leased)) ELSE excluded.granted END,
  leased = CASE WHEN b.window_start > excluded.window_start - make_interval(secs => $4)
                THEN b.leased + GREATEST(0, LEAST(excluded.granted, excluded.capacity - b.leased)) ELSE excluded.granted END,
  window_start = CASE WHEN b.window_start > excluded.window_start - make_interval(secs => $4)
                      THEN b.window_start ELSE excluded.window_start END,
  capacity = excluded.capacity
RETURNING bucket, granted, leased, capacity,
  (extract(epoch FROM window_start) * 1000)::float8 AS window_start_ms,
  ((extract(epoch FROM window_start) + $4 - extract(epoch FROM clock_timestamp())) * 1000)::float8 AS ends_in_ms`;

/** Leases requests of the shared rate-limit counters (see `rate_limit_buckets`), one round trip for all. */
export async function leaseRequests(pool: Pool, windowSeconds: number, wants: readonly LeaseWant[]): Promise<LeaseGrant[]> {
  if (wants.length === 0) return [];
  const { rows } = await pool.query<{ bucket: string; granted: number; leased: number; capacity: number; window_start_ms: number; ends_in_ms: number }>(LEASE, [
    wants.map((w) => w.bucket),
    wants.map((w) => w.capacity),
    wants.map((w) => w.want),
    windowSeconds,
  ]);
  return rows.map((r) => ({
    bucket: r.bucket,
    granted: r.granted,
    leased: r.leased,
    capacity: r.capacity,
    windowStartMs: r.window_start_ms,
    windowEndsInMs: Math.max(0, r.ends_in_ms),
  }));
}

/** Deletes buckets whose window ended more than `olderThanSeconds` ago (users and addresses gone quiet). */
export async function sweepRateLimitBuckets(pool: Pool, olderThanSeconds: number): Promise<number> {
  const { rowCount } = await pool.query("DELETE FROM rate_limit_buckets WHERE window_start < clock_timestamp() - make_interval(secs => $1)", [
    olderThanSeconds,
  ]);
  return rowCount ?? 0;
}

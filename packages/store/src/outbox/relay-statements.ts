import { preparedStatement } from "@steward/platform";
import { busCopyColumns } from "../event-store/bus-copy";
import { LOCK_RUNS_IN_ORDER, SETTLED } from "./bus-settled";
import type { ClaimedRow } from "./run-order";
import type { CopiesSettlement } from "./settle-copies";

/** The relay's statements (`relay.ts`): what it claims in a batch and what it writes back. */

/** Rows to try again: due again later (counted when refused), or set aside for good at their last attempt. */
export const RECORD_RETRIED = `
UPDATE outbox o
   SET attempts = r.attempts,
       last_error = r.reason,
       retry_at = CASE WHEN r.set_aside THEN NULL ELSE clock_timestamp() + make_interval(secs => r.retry_ms / 1000.0) END,
       set_aside_at = CASE WHEN r.set_aside THEN clock_timestamp() END
  FROM unnest($1::bigint[], $2::int[], $3::text[], $4::bool[], $5::int[]) AS r(id, attempts, reason, set_aside, retry_ms)
 WHERE o.id = r.id`;

/**
 * The outbox rows a relay may publish now, locked: due, not set aside, for its subjects, and not behind a row of
 * their run that is not due (its writer still holds it, or it waits to be tried again); a command only once its
 * run's events written before it are on the bus or due now (the batch sends them first). Once per wake-up of
 * every relay: prepared.
 */
export const claimPending = preparedStatement(
  "steward.outbox_claim",
  `SELECT o.id, o.run_id, o.subject, o.msg_id, o.payload, o.headers, o.attempts, o.after_version, r.published_version
     FROM outbox o LEFT JOIN runs r ON r.id = o.run_id
    WHERE o.published_at IS NULL AND o.set_aside_at IS NULL AND (o.retry_at IS NULL OR o.retry_at <= clock_timestamp())
      AND ($2::text[] IS NULL OR EXISTS (SELECT FROM unnest($2::text[]) AS p(prefix) WHERE starts_with(o.subject, p.prefix)))
      AND (o.run_id IS NULL OR NOT EXISTS (
           SELECT FROM outbox h
            WHERE h.run_id = o.run_id AND h.id < o.id AND h.published_at IS NULL AND h.set_aside_at IS NULL
              AND h.retry_at > clock_timestamp()))
      AND (o.after_version IS NULL OR r.id IS NULL OR r.published_version >= o.after_version OR (
           (r.publish_held_until IS NULL OR r.publish_held_until <= clock_timestamp())
           AND (r.publish_retry_at IS NULL OR r.publish_retry_at <= clock_timestamp())))
    ORDER BY o.id LIMIT $1 FOR UPDATE OF o`,
);

/**
 * The copies a relay may publish now, built from the events table: of the runs whose events above
 * `published_version` are due (no writer holds them, no retry pending) and for its subjects, those events in
 * version order, up to the first command of the run that is not due. The runs' rows are not locked (their writers append meanwhile); the relays' lock keeps relays
 * from publishing the same run at once. Prepared.
 */
export const claimCopies = preparedStatement(
  "steward.outbox_claim_copies",
  `SELECT r.id AS run_id, e.version, CASE WHEN e.version = r.published_version + 1 THEN r.publish_attempts ELSE 0 END AS attempts,
          e.event_id::text AS id, ${busCopyColumns("e", "r.events_subject")}
     FROM (SELECT id, published_version, events_subject, publish_attempts FROM runs
            WHERE NOT bus_settled AND version > published_version AND events_subject IS NOT NULL
              AND (publish_held_until IS NULL OR publish_held_until <= clock_timestamp())
              AND (publish_retry_at IS NULL OR publish_retry_at <= clock_timestamp())
              AND ($2::text[] IS NULL OR EXISTS (SELECT FROM unnest($2::text[]) AS p(prefix) WHERE starts_with(events_subject, p.prefix)))
            ORDER BY id LIMIT $1) r
    -- A command of the run that is not due (held by its writer, or waiting for its next try) holds back the
    -- events written after it.
    CROSS JOIN LATERAL (
          SELECT min(h.after_version) AS cap FROM outbox h
           WHERE h.run_id = r.id AND h.published_at IS NULL AND h.set_aside_at IS NULL AND h.retry_at > clock_timestamp()) c
    CROSS JOIN LATERAL (
          SELECT * FROM events e
           WHERE e.stream_id = r.id AND e.version > r.published_version AND (c.cap IS NULL OR e.version <= c.cap)
           ORDER BY e.version LIMIT $1) e
    ORDER BY r.id, e.version LIMIT $1`,
);

/**
 * What the copies' tries made of their runs: how far each run is on the bus, its retry, and the copies set aside
 * (kept in the outbox with their reason). The runs' rows are locked in id order, as a writer's marks lock them.
 */
export const SETTLE_COPIES = `
WITH s AS (SELECT * FROM unnest($1::uuid[], $2::int[], $3::int[], $4::float8[]) AS s(id, version, attempts, retry_ms)),
${LOCK_RUNS_IN_ORDER("s")},
aside AS (
  INSERT INTO outbox (run_id, subject, msg_id, payload, headers, attempts, last_error, set_aside_at)
  SELECT a.run_id, a.subject, a.msg_id, a.payload, a.headers, a.attempts, a.reason, clock_timestamp()
    FROM unnest($5::uuid[], $6::text[], $7::text[], $8::text[], $9::jsonb[], $10::int[], $11::text[])
         AS a(run_id, subject, msg_id, payload, headers, attempts, reason)
  ON CONFLICT (msg_id) DO NOTHING)
UPDATE runs r
   SET published_version = greatest(r.published_version, l.version), bus_settled = ${SETTLED("l.version")}, publish_attempts = l.attempts,
       publish_retry_at = CASE WHEN l.retry_ms IS NULL THEN NULL ELSE clock_timestamp() + make_interval(secs => l.retry_ms / 1000.0) END
  FROM locked l WHERE r.id = l.id`;

/**
 * The header a copy a relay publishes carries (a writer's own copies have none): which path put an event on the
 * bus, when a writer's publish was missed (it died, the bus refused it) or never tried (another writer's append).
 */
export const RELAYED_HEADER = "Steward-Relayed";

export const relayed = (row: ClaimedRow): ClaimedRow => ({ ...row, headers: { ...row.headers, [RELAYED_HEADER]: "true" } });

export function settleCopiesParams(s: CopiesSettlement): unknown[] {
  const a = s.setAside;
  return [
    s.runs.map((r) => r.runId),
    s.runs.map((r) => r.publishedVersion),
    s.runs.map((r) => r.attempts),
    s.runs.map((r) => r.retryInMs),
    a.map((x) => x.row.run_id),
    a.map((x) => x.row.subject),
    a.map((x) => x.row.msg_id),
    a.map((x) => x.row.payload),
    a.map((x) => JSON.stringify(x.row.headers)),
    a.map((x) => x.attempts),
    a.map((x) => x.reason),
  ];
}

import { ConcurrencyError } from "@steward/platform";

/** SQL condition: the stream's last version is the expected one (the check of every append). */
export function streamAtVersion(streamId: string, expected: string): string {
  return `(SELECT coalesce(max(e.version), 0) FROM events e WHERE e.stream_id = ${streamId}) = ${expected}`;
}

/**
 * The first two CTEs of every append: `input` numbers the new events after the expected version, and `ins` inserts
 * them only when the stream is at that version (a racing appender hits the unique (stream_id, version)
 * constraint, or finds the stream moved and inserts nothing). Parameters: $1 stream id, $2 tenant, $3 expected
 * version, $4 event ids, $5 types, $6 data (jsonb), $7 metadata (jsonb). `returning` is what `ins` gives the rest.
 */
export function insertEventsAtVersion(returning: string): string {
  return `input AS (
  SELECT e.event_id, $3::int + e.ord::int AS version, e.type, e.data
    FROM unnest($4::uuid[], $5::text[], $6::jsonb[]) WITH ORDINALITY AS e(event_id, type, data, ord)),
ins AS (
  INSERT INTO events (event_id, stream_id, tenant_id, version, type, data, metadata)
  SELECT i.event_id, $1, $2, i.version, i.type, i.data, $7::jsonb FROM input i
   WHERE ${streamAtVersion("$1", "$3")}
  RETURNING ${returning})`;
}

const UNIQUE_VIOLATION = "23505";

/** A failed append as the caller sees it: a racing appender is a ConcurrencyError; anything else is itself. */
export function appendFailure(err: unknown, streamId: string, expectedVersion: number): unknown {
  const { code, constraint } = err as { code?: string; constraint?: string };
  if (code === UNIQUE_VIOLATION && constraint === "events_stream_version") return new ConcurrencyError(streamId, expectedVersion, { cause: err });
  return err;
}

import { randomUUID } from "node:crypto";
import type { PoolClient } from "pg";
import { ConcurrencyError } from "@steward/platform";
import type { RunEvent, StoredRunEvent } from "@steward/contract";
import { assertEventsFit } from "./event-size";

export interface AppendOptions {
  readonly streamId: string;
  readonly tenantId: string;
  /** The version the stream must be at (0 for a new stream); anything else writes nothing. */
  readonly expectedVersion: number;
  readonly events: readonly RunEvent[];
  readonly traceparent?: string;
}

const UNIQUE_VIOLATION = "23505";

/**
 * Appends events to a stream inside the caller's transaction. One statement: the insert happens only when
 * the stream's current version equals the expected one, and the unique (stream_id, version) constraint
 * catches a concurrent appender that passed the same check. An event over the size limit writes nothing
 * (EventTooLargeError).
 */
export async function appendToStream(client: PoolClient, options: AppendOptions): Promise<StoredRunEvent[]> {
  const { streamId, tenantId, expectedVersion, events } = options;
  assertEventsFit(streamId, events);
  const ids = events.map(() => randomUUID());
  const metadata = options.traceparent ? { traceparent: options.traceparent } : {};
  let rows: Array<{ version: number; recorded_at: string }>;
  try {
    const result = await client.query<{ version: number; recorded_at: string }>(
      `INSERT INTO events (event_id, stream_id, tenant_id, version, type, data, metadata)
       SELECT e.event_id, $1, $2, $3 + e.ord, e.type, e.data, $7::jsonb
         FROM unnest($4::uuid[], $5::text[], $6::jsonb[]) WITH ORDINALITY AS e(event_id, type, data, ord)
        WHERE (SELECT coalesce(max(version), 0) FROM events WHERE stream_id = $1) = $3
       RETURNING version, recorded_at`,
      [
        streamId,
        tenantId,
        expectedVersion,
        ids,
        events.map((e) => e.type),
        events.map((e) => JSON.stringify(e.data)),
        JSON.stringify(metadata),
      ],
    );
    rows = result.rows;
  } catch (err) {
    if ((err as { code?: string }).code === UNIQUE_VIOLATION) throw new ConcurrencyError(streamId, expectedVersion, { cause: err });
    throw err;
  }
  if (rows.length !== events.length) throw new ConcurrencyError(streamId, expectedVersion);
  rows.sort((a, b) => a.version - b.version);
  return events.map((event, i) => ({
    ...event,
    metadata: {
      event_id: ids[i],
      run_id: streamId,
      tenant_id: tenantId,
      seq: rows[i].version,
      recorded_at: rows[i].recorded_at,
      ...metadata,
    },
  })) as StoredRunEvent[];
}

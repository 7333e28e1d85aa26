import type { Pool, PoolClient } from "pg";
import type { StoredRunEvent } from "@steward/contract";
import { preparedStatement } from "@steward/platform";

export interface EventRow {
  event_id: string;
  stream_id: string;
  tenant_id: string;
  version: number;
  type: string;
  data: unknown;
  metadata: Record<string, unknown>;
  recorded_at: string;
  global_position: number;
}

export function rowToEvent(row: EventRow): StoredRunEvent {
  return {
    type: row.type,
    data: row.data,
    metadata: {
      ...row.metadata,
      event_id: row.event_id,
      run_id: row.stream_id,
      tenant_id: row.tenant_id,
      seq: row.version,
      recorded_at: row.recorded_at,
    },
  } as StoredRunEvent;
}

/** The columns of an `EventRow`, as every read of stored events selects them. */
export const EVENT_COLUMNS = "event_id, stream_id, tenant_id, version, type, data, metadata, recorded_at, global_position";

/** Once per step of a run (and per event page): prepared. */
const readStatement = preparedStatement(
  "steward.read_stream",
  `SELECT ${EVENT_COLUMNS} FROM events WHERE stream_id = $1 AND version > $2 ORDER BY version LIMIT $3`,
);

/** Reads a stream in order, from just after `after` (a version; 0 for the start), at most `limit` events. */
export async function readStream(db: Pool | PoolClient, streamId: string, options: { after?: number; limit?: number } = {}): Promise<StoredRunEvent[]> {
  const { rows } = await db.query<EventRow>(readStatement([streamId, options.after ?? 0, options.limit ?? 10_000]));
  return rows.map(rowToEvent);
}

import type { Pool } from "pg";
import type { StoredRunEvent } from "@steward/contract";
import { EVENT_COLUMNS, rowToEvent, type EventRow } from "./read-stream";

export interface PositionedEvent {
  readonly position: number;
  readonly event: StoredRunEvent;
}

/**
 * Reads every stream in global-position order after `after`. Positions come from a sequence, so a reader
 * racing open transactions may see a later position before an earlier one commits; projections rebuilt
 * from a quiet store (the replay command) are unaffected.
 */
export async function readAll(db: Pool, options: { after?: number; limit?: number } = {}): Promise<PositionedEvent[]> {
  const { rows } = await db.query<EventRow>(`SELECT ${EVENT_COLUMNS} FROM events WHERE global_position > $1 ORDER BY global_position LIMIT $2`, [
    options.after ?? 0,
    options.limit ?? 1000,
  ]);
  return rows.map((row) => ({ position: row.global_position, event: rowToEvent(row) }));
}

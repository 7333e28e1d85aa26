import { randomBytes } from "node:crypto";
import type { RunEvent } from "@steward/contract";
import type { Pool } from "@steward/platform";
import { queuedEvent } from "./run-bus";

/**
 * `run.queued` with an input of 4,000 characters that do not compress, so that PostgreSQL keeps it out of the runs
 * row, in the table's TOAST chunks.
 */
export function queuedWithLongInput(): RunEvent {
  const event = queuedEvent();
  return { ...event, data: { ...event.data, input: randomBytes(3000).toString("base64") } } as RunEvent;
}

/**
 * Every TOAST chunk of the runs table, each as its value's id and the transaction that wrote it: a value written
 * again gets new chunks.
 */
export async function runsToastChunks(pool: Pool): Promise<string[]> {
  const { rows: table } = await pool.query<{ toast: string }>("SELECT reltoastrelid::regclass::text AS toast FROM pg_class WHERE oid = 'runs'::regclass");
  const { rows } = await pool.query<{ chunk: string }>(`SELECT chunk_id::text || '@' || xmin::text AS chunk FROM ${table[0].toast} ORDER BY 1`);
  return rows.map((r) => r.chunk);
}

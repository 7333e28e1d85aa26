import pg from "pg";
import { formatMicros } from "@steward/contract";

const TIMESTAMPTZ_OID = 1184;
const INT8_OID = 20;

/** Converts PostgreSQL's text form of a timestamptz (session time zone UTC) to ISO-8601 with microseconds. */
export function pgTimestampToIso(text: string): string {
  const m = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?\+00(?::00)?$/.exec(text);
  if (!m) throw new RangeError(`unexpected timestamptz text ${text}`);
  const seconds = BigInt(Date.parse(`${m[1]}T${m[2]}Z`)) / 1000n;
  return formatMicros(seconds * 1_000_000n + BigInt((m[3] ?? "").padEnd(6, "0")));
}

const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === TIMESTAMPTZ_OID) return (v: string) => pgTimestampToIso(v);
    if (oid === INT8_OID) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format as "text");
  },
};

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

/** A pool whose sessions run in UTC and return timestamps as ISO strings with microseconds. */
export function createPool(connectionString: string, options: { max?: number; applicationName?: string } = {}): pg.Pool {
  return new pg.Pool({
    connectionString,
    max: options.max ?? 10,
    application_name: options.applicationName,
    options: "-c TimeZone=UTC",
    types,
  });
}

/** Runs `work` in one transaction; rolls back on any error and rethrows it. */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

import pg from "pg";
import { formatMicros } from "@steward/contract";
import { isQueryTimeout } from "./transient";

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

export interface PoolOptions {
  /** Connections the pool may hold. Default 10. */
  max?: number;
  applicationName?: string;
  /** How long a checkout waits for a new connection before failing, in ms. Default 5000. */
  connectTimeoutMs?: number;
  /**
   * How long a statement may go without an answer before it fails (and its connection is dropped), in ms.
   * Default 60 000. Not a statement limit (the server's statement_timeout is): a bound on waiting for a
   * socket that died without closing, which TCP alone would wait on for about 15 minutes.
   */
  queryTimeoutMs?: number;
  /** Told about a connection that died while idle (the pool drops it and opens another when needed). */
  onError?: (err: Error) => void;
}

/**
 * A pool whose sessions run in UTC and return timestamps as ISO strings with microseconds. A server that
 * restarts or goes away never takes the process down: an idle connection's error is reported to `onError`
 * and the connection is dropped; a query on a dead connection fails like any other query, and a checkout
 * while the server is unreachable fails after `connectTimeoutMs` instead of waiting forever.
 */
export function createPool(connectionString: string, options: PoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 10,
    application_name: options.applicationName,
    options: "-c TimeZone=UTC",
    types,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
    // A peer that vanished without closing (a cut network) is noticed by the kernel, not after hours.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    // A connection cut mid-statement: TCP gives up only after minutes (retransmissions, or keep-alive
    // probes the system sends 75 s apart); this bound fails the statement first.
    query_timeout: options.queryTimeoutMs ?? 60_000,
  });
  guardPool(pool, options.onError);
  return pool;
}

/**
 * Keeps a lost connection from killing the process. pg emits `error` on a client whose server went away;
 * the pool listens only while the client is idle, so one checked out and waiting (idle in a transaction
 * while a tool runs, or while NATS answers) would throw. Every client gets a listener of its own: the error
 * is reported, the next query on that client fails like any query, and the pool drops it on release.
 */
export function guardPool(pool: pg.Pool, onError: (err: Error) => void = () => undefined): void {
  pool.on("error", onError);
  pool.on("connect", (client) => client.on("error", onError));
}

/** Runs `work` in one transaction; rolls back on any error and rethrows it. */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // A connection that cannot even roll back is broken: destroy it rather than hand it to the next caller.
  let broken = false;
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    broken = isQueryTimeout(err);
    if (!broken) await client.query("ROLLBACK").catch(() => (broken = true));
    throw err;
  } finally {
    client.release(broken);
  }
}

/** Hands a checked-out client back: dropped when a statement timed out on it, reused otherwise. */
export function releaseClient(client: pg.PoolClient, err?: unknown): void {
  client.release(isQueryTimeout(err));
}

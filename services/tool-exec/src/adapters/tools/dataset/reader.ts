import pg from "pg";
import { guardPool } from "@steward/platform";
import { cancelBackend } from "./cancel";
import { classify, DatasetQueryError } from "./errors";
import { singleStatement } from "./statement";

export interface DatasetLimits {
  /** Rows a query may return; more are cut with a note. */
  readonly rowLimit: number;
  /** statement_timeout of every query, in ms (the role's own timeout bounds it as well). */
  readonly timeoutMs: number;
}

export interface QueryResult {
  readonly columns: string[];
  readonly rows: Array<Record<string, unknown>>;
  readonly truncated: boolean;
}

export interface DatasetReader {
  readonly schema: string;
  /** Runs one read-only query of ours (catalogue lookups), parameters bound. */
  catalog(sql: string, params: unknown[], signal?: AbortSignal): Promise<Array<Record<string, unknown>>>;
  /** Runs the model's SELECT: one statement, extended protocol, read-only, time-limited, row-limited; stopped when `signal` aborts. */
  select(sql: string, signal?: AbortSignal): Promise<QueryResult>;
  /** EXPLAINs the model's SELECT the same way, without running it. */
  explain(sql: string, signal?: AbortSignal): Promise<{ totalCost: number; planRows: number }>;
  close(): Promise<void>;
}

/**
 * Per transaction: our statement_timeout, never above the role's own (the role's value is the ceiling; 0 there
 * means none), and the dataset's schema. Also the backend's pid, to cancel it by.
 */
const SETUP = `SELECT pg_backend_pid() AS pid,
  set_config('statement_timeout', (SELECT CASE WHEN s.setting::bigint = 0 THEN $1::bigint ELSE least(s.setting::bigint, $1::bigint) END
                                     FROM pg_settings s WHERE s.name = 'statement_timeout')::text, true),
  set_config('search_path', $2, true)`;

/** What an aborted call answers: its own time ran out (the tool's timeout), or the caller cancelled it. */
const stopped = (signal: AbortSignal | undefined) => {
  const reason = signal?.reason as { name?: string } | string | undefined;
  if (reason === "timeout" || (typeof reason === "object" && reason?.name === "TimeoutError")) {
    return new DatasetQueryError("QUERY_TIMEOUT", "the query ran longer than allowed and was stopped");
  }
  return new DatasetQueryError("QUERY_CANCELLED", "the call was cancelled and its query stopped");
};

/**
 * The dataset connection, as a login role that may only read the dataset's database. Walls: the role
 * (grants, its own statement_timeout, no TEMP), the READ ONLY transaction, and the extended protocol with the
 * subquery wrapping, which together admit exactly one SELECT. Every query is sent with bound values, so
 * node-postgres uses the extended protocol and the server refuses a second statement outright.
 */
export function createDatasetReader(connectionString: string, schema: string, limits: DatasetLimits): DatasetReader {
  const pool = new pg.Pool({ connectionString, max: 4, application_name: "steward-dataset", connectionTimeoutMillis: 5000 });
  // A connection dropped by a server restart must not take tool-exec down; the next call reconnects.
  guardPool(pool);

  async function inReadOnly<T>(signal: AbortSignal | undefined, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    if (signal?.aborted) throw stopped(signal);
    const client = await pool.connect();
    let pid = 0;
    let aborted = false;
    const onAbort = () => {
      aborted = true;
      if (pid) void cancelBackend(connectionString, pid);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      await client.query("BEGIN READ ONLY");
      const setup = await client.query<{ pid: number }>(SETUP, [Math.floor(limits.timeoutMs), pg.escapeIdentifier(schema)]);
      pid = setup.rows[0].pid;
      if (aborted) throw stopped(signal);
      return await work(client);
    } catch (err) {
      if (aborted) throw stopped(signal);
      throw err instanceof DatasetQueryError ? err : classify(err);
    } finally {
      signal?.removeEventListener("abort", onAbort);
      // A cancelled call's connection is dropped, not reused: whatever it was doing ends with it.
      if (aborted) client.release(true);
      else {
        await client.query("ROLLBACK").catch(() => undefined);
        client.release();
      }
    }
  }

  return {
    schema,
    catalog: (sql, params, signal) => inReadOnly(signal, async (c) => (await c.query(sql, params)).rows),
    async select(sql, signal) {
      const body = singleStatement(sql);
      return inReadOnly(signal, async (c) => {
        const r = await c.query(`SELECT * FROM (${body}\n) AS steward_query LIMIT $1`, [limits.rowLimit + 1]);
        return { columns: r.fields.map((f) => f.name), rows: r.rows.slice(0, limits.rowLimit), truncated: r.rows.length > limits.rowLimit };
      });
    },
    async explain(sql, signal) {
      const body = singleStatement(sql);
      return inReadOnly(signal, async (c) => {
        const r = await c.query(`EXPLAIN (FORMAT JSON) SELECT * FROM (${body}\n) AS steward_query LIMIT $1`, [limits.rowLimit + 1]);
        const plan = (r.rows[0]["QUERY PLAN"] as Array<{ Plan: { "Total Cost": number; "Plan Rows": number } }>)[0].Plan;
        return { totalCost: plan["Total Cost"], planRows: plan["Plan Rows"] };
      });
    },
    close: () => pool.end(),
  };
}

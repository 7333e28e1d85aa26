import pg from "pg";
import { guardPool } from "@steward/platform";

export interface DatasetLimits {
  /** Rows a query may return; more are cut with a note. */
  readonly rowLimit: number;
  /** statement_timeout of every query, in ms. */
  readonly timeoutMs: number;
}

/** A query the dataset refused, classified; `message` is safe to show the model. */
export class DatasetQueryError extends Error {
  constructor(readonly code: "QUERY_NOT_ALLOWED" | "QUERY_TIMEOUT" | "QUERY_INVALID", message: string) {
    super(message);
    this.name = "DatasetQueryError";
  }
}

export interface QueryResult {
  readonly columns: string[];
  readonly rows: Array<Record<string, unknown>>;
  readonly truncated: boolean;
}

export interface DatasetReader {
  readonly schema: string;
  /** Runs one read-only query of ours (catalogue lookups), parameters bound. */
  catalog(sql: string, params: unknown[]): Promise<Array<Record<string, unknown>>>;
  /** Runs the model's SELECT: wrapped as a subquery (so it must be one SELECT), read-only, time-limited, row-limited. */
  select(sql: string): Promise<QueryResult>;
  /** EXPLAINs the model's SELECT the same way, without running it. */
  explain(sql: string): Promise<{ totalCost: number; planRows: number }>;
  close(): Promise<void>;
}

function classify(err: unknown): DatasetQueryError {
  const code = (err as { code?: string }).code ?? "";
  const message = (err as Error).message ?? "query failed";
  if (code === "57014") return new DatasetQueryError("QUERY_TIMEOUT", "the query ran longer than allowed and was stopped");
  if (code === "25006" || code === "42501" || code.startsWith("0A")) return new DatasetQueryError("QUERY_NOT_ALLOWED", "only reading queries on the dataset are allowed");
  if (code.startsWith("42") || code.startsWith("22")) return new DatasetQueryError("QUERY_INVALID", message.slice(0, 300));
  return new DatasetQueryError("QUERY_INVALID", "the query could not be run");
}

/** Strips trailing semicolons and white space; the rest must be a single SELECT (or WITH … SELECT). */
function statementOf(sql: string): string {
  const body = sql.trim().replace(/;+\s*$/, "");
  if (!/^(select|with|values|table)\b/i.test(body)) throw new DatasetQueryError("QUERY_NOT_ALLOWED", "only a single SELECT query is allowed");
  return body;
}

/**
 * The dataset connection: a login role that may only read the dataset's schema, every statement in a
 * READ ONLY transaction with a statement_timeout. Three walls: the role's grants, the transaction mode, and
 * the subquery wrapping (which refuses anything that is not one SELECT).
 */
export function createDatasetReader(connectionString: string, schema: string, limits: DatasetLimits): DatasetReader {
  const pool = new pg.Pool({ connectionString, max: 4, application_name: "steward-dataset", connectionTimeoutMillis: 5000 });
  // A connection dropped by a server restart must not take tool-exec down; the next call reconnects.
  guardPool(pool);
  async function inReadOnly<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    try {
      await client.query("BEGIN READ ONLY");
      await client.query(`SET LOCAL statement_timeout = ${Math.floor(limits.timeoutMs)}`);
      await client.query(`SET LOCAL search_path = ${pg.escapeIdentifier(schema)}`);
      return await work(client);
    } catch (err) {
      throw err instanceof DatasetQueryError ? err : classify(err);
    } finally {
      await client.query("ROLLBACK").catch(() => undefined);
      client.release();
    }
  }
  return {
    schema,
    catalog: (sql, params) => inReadOnly(async (c) => (await c.query(sql, params)).rows),
    async select(sql) {
      const body = statementOf(sql);
      return inReadOnly(async (c) => {
        const r = await c.query(`SELECT * FROM (${body}) AS steward_query LIMIT ${limits.rowLimit + 1}`);
        return { columns: r.fields.map((f) => f.name), rows: r.rows.slice(0, limits.rowLimit), truncated: r.rows.length > limits.rowLimit };
      });
    },
    async explain(sql) {
      const body = statementOf(sql);
      return inReadOnly(async (c) => {
        const r = await c.query(`EXPLAIN (FORMAT JSON) SELECT * FROM (${body}) AS steward_query`);
        const plan = (r.rows[0]["QUERY PLAN"] as Array<{ Plan: { "Total Cost": number; "Plan Rows": number } }>)[0].Plan;
        return { totalCost: plan["Total Cost"], planRows: plan["Plan Rows"] };
      });
    },
    close: () => pool.end(),
  };
}

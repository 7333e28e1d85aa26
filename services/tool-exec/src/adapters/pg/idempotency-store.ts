import { isQueryTimeout, preparedStatement, releaseClient, type Pool } from "@steward/platform";
import type { PoolClient } from "pg";
import type { SqlSession } from "../../domain/tool";

export interface StoredToolResult {
  readonly resultCode: string;
  readonly result: { result: unknown; evidence: unknown[] };
}

/**
 * A call's record, held for the call: no other caller of the same call gets past `hold` until this one has
 * completed or released it. Exactly one of `complete` and `release` must be called.
 */
export interface HeldRecord {
  /** The result a previous caller kept for this call, if any (then `release`: nothing runs again). */
  readonly stored: StoredToolResult | null;
  /**
   * Runs `work` inside the record's transaction (for an effect that must commit with it) and keeps a
   * successful result with that effect, in the same commit. A failed result is rolled back with its effect:
   * a failed call may be tried again.
   */
  complete(work: (transaction: SqlSession) => Promise<StoredToolResult>): Promise<StoredToolResult>;
  /** Lets the record go and keeps nothing (the call was denied, or had already run). */
  release(): Promise<void>;
}

/** Idempotency records of tool results, by run and fingerprint. */
export interface IdempotencyStore {
  /**
   * Holds the record of one call (a transaction-scoped advisory lock) and reads what it holds. Cheap to
   * start before the call is known to be permitted: it holds a lock, never runs anything.
   */
  hold(runId: string, fingerprint: string, toolName: string): Promise<HeldRecord>;
  /**
   * Whether a record could be held now without waiting for a connection: one is free, or may be opened, and nobody
   * waits for one. A call that need not hold its record yet (one sent held, before its release) holds it early only
   * then, so that calls already released do not queue behind calls still waiting for their release.
   */
  spare(): boolean;
  /** The stored result of a call, if any (a read's record: no lock, nothing to serialise). */
  find(runId: string, fingerprint: string): Promise<StoredToolResult | null>;
  /** Stores a read's successful result; a result already stored for the call is kept. One statement. */
  keep(runId: string, fingerprint: string, toolName: string, value: StoredToolResult): Promise<void>;
}

interface ResultRow {
  readonly result_code: string;
  readonly result: StoredToolResult["result"];
}

/** A read tool's lookup and record, once per call each: prepared. */
const findResult = preparedStatement("steward.find_tool_result", "SELECT result_code, result FROM tool_results WHERE run_id = $1 AND fingerprint = $2");
const keepResult = preparedStatement(
  "steward.keep_tool_result",
  `INSERT INTO tool_results (run_id, fingerprint, tool_name, result_code, result) VALUES ($1, $2, $3, $4, $5)
   ON CONFLICT DO NOTHING`,
);

const storedOf = (row: ResultRow | undefined): StoredToolResult | null => (row ? { resultCode: row.result_code, result: row.result } : null);

/**
 * `pool` must not be the pool the tools themselves use: a call holds one of its clients (the lock's
 * transaction) while the tool runs, and a tool waiting for a client of the same pool would deadlock it.
 *
 * A held record costs two round trips besides the tool's own statements: opening it (BEGIN, the lock and the
 * lookup sent as one simple query) and keeping the result (INSERT and COMMIT, one simple query). Their values
 * go in as quoted literals, which the simple protocol requires.
 */
export function createPgIdempotencyStore(pool: Pool): IdempotencyStore {
  async function open(client: PoolClient, runId: string, fingerprint: string): Promise<ResultRow | undefined> {
    const run = client.escapeLiteral(runId);
    const call = client.escapeLiteral(fingerprint);
    const results = (await client.query(
      `BEGIN; SELECT pg_advisory_xact_lock(hashtextextended(${client.escapeLiteral(`${runId}/${fingerprint}`)}, 0));
       SELECT result_code, result FROM tool_results WHERE run_id = ${run} AND fingerprint = ${call}`,
    )) as unknown as { rows: ResultRow[] }[];
    return results[2].rows[0];
  }

  return {
    spare: () => pool.waitingCount === 0 && (pool.idleCount > 0 || pool.totalCount < (pool.options.max ?? 10)),
    async find(runId, fingerprint) {
      const { rows } = await pool.query<ResultRow>(findResult([runId, fingerprint]));
      return storedOf(rows[0]);
    },
    async keep(runId, fingerprint, toolName, value) {
      await pool.query(keepResult([runId, fingerprint, toolName, value.resultCode, JSON.stringify(value.result)]));
    },
    async hold(runId, fingerprint, toolName) {
      const client = await pool.connect();
      let settled = false;
      /** Ends the transaction one way or the other and gives the client back, once. */
      async function end(sql: string | null, failure?: unknown): Promise<void> {
        if (settled) throw new Error("a held record is completed or released once");
        settled = true;
        try {
          if (sql) await client.query(sql);
        } catch (err) {
          failure = err;
          if (!isQueryTimeout(err)) await client.query("ROLLBACK").catch(() => undefined);
          throw err;
        } finally {
          releaseClient(client, failure);
        }
      }
      let row: ResultRow | undefined;
      try {
        row = await open(client, runId, fingerprint);
      } catch (err) {
        await end(isQueryTimeout(err) ? null : "ROLLBACK", err).catch(() => undefined);
        throw err;
      }
      return {
        stored: storedOf(row),
        release: () => end("ROLLBACK"),
        async complete(work) {
          let value: StoredToolResult;
          try {
            value = await work(client);
          } catch (err) {
            // A timed-out query leaves the connection busy: it is dropped, not rolled back.
            await end(isQueryTimeout(err) ? null : "ROLLBACK", err).catch(() => undefined);
            throw err;
          }
          if (value.resultCode !== "ok") {
            // A failed call may be tried again, so it must leave nothing behind.
            await end("ROLLBACK");
            return value;
          }
          const values = [runId, fingerprint, toolName, value.resultCode, JSON.stringify(value.result)].map((v) => client.escapeLiteral(v));
          await end(`INSERT INTO tool_results (run_id, fingerprint, tool_name, result_code, result) VALUES (${values.join(", ")}); COMMIT`);
          return value;
        },
      };
    },
  };
}

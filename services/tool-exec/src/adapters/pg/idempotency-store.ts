import { isQueryTimeout, releaseClient, type Pool } from "@steward/platform";
import type { SqlSession } from "../../domain/tool";

export interface StoredToolResult {
  readonly resultCode: string;
  readonly result: { result: unknown; evidence: unknown[] };
}

/** Idempotency records of tool results, by run and fingerprint. */
export interface IdempotencyStore {
  /**
   * Runs `work` at most once per run and fingerprint: concurrent callers of the same call wait for the first
   * (a transaction-scoped advisory lock), and later callers get the stored result. Only successful results
   * are stored; a failed call may be tried again. `work` gets the record's transaction for an effect that
   * must commit with it.
   */
  once(
    runId: string,
    fingerprint: string,
    toolName: string,
    work: (transaction: SqlSession) => Promise<StoredToolResult>,
  ): Promise<{ value: StoredToolResult; replayed: boolean }>;
  /** The stored result of a call, if any (a read's record: no lock, nothing to serialise). */
  find(runId: string, fingerprint: string): Promise<StoredToolResult | null>;
  /** Stores a read's successful result; a result already stored for the call is kept. One statement. */
  keep(runId: string, fingerprint: string, toolName: string, value: StoredToolResult): Promise<void>;
}

/**
 * `pool` must not be the pool the tools themselves use: a call holds one of its clients (the lock's
 * transaction) while the tool runs, and a tool waiting for a client of the same pool would deadlock it.
 */
export function createPgIdempotencyStore(pool: Pool): IdempotencyStore {
  return {
    async find(runId, fingerprint) {
      const { rows } = await pool.query<{ result_code: string; result: StoredToolResult["result"] }>(
        "SELECT result_code, result FROM tool_results WHERE run_id = $1 AND fingerprint = $2",
        [runId, fingerprint],
      );
      return rows[0] ? { resultCode: rows[0].result_code, result: rows[0].result } : null;
    },
    async keep(runId, fingerprint, toolName, value) {
      await pool.query(
        `INSERT INTO tool_results (run_id, fingerprint, tool_name, result_code, result) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT DO NOTHING`,
        [runId, fingerprint, toolName, value.resultCode, JSON.stringify(value.result)],
      );
    },
    async once(runId, fingerprint, toolName, work) {
      const client = await pool.connect();
      let failure: unknown;
      try {
        await client.query("BEGIN");
        await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`${runId}/${fingerprint}`]);
        const found = await client.query<{ result_code: string; result: StoredToolResult["result"] }>(
          "SELECT result_code, result FROM tool_results WHERE run_id = $1 AND fingerprint = $2",
          [runId, fingerprint],
        );
        if (found.rows[0]) {
          await client.query("COMMIT");
          return { value: { resultCode: found.rows[0].result_code, result: found.rows[0].result }, replayed: true };
        }
        const value = await work(client);
        if (value.resultCode !== "ok") {
          // A failed call may be tried again, so it must leave nothing behind.
          await client.query("ROLLBACK");
          return { value, replayed: false };
        }
        await client.query(
          `INSERT INTO tool_results (run_id, fingerprint, tool_name, result_code, result) VALUES ($1, $2, $3, $4, $5)`,
          [runId, fingerprint, toolName, value.resultCode, JSON.stringify(value.result)],
        );
        await client.query("COMMIT");
        return { value, replayed: false };
      } catch (err) {
        failure = err;
        if (!isQueryTimeout(err)) await client.query("ROLLBACK").catch(() => undefined);
        throw err;
      } finally {
        releaseClient(client, failure);
      }
    },
  };
}

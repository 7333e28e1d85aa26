import { isQueryTimeout, preparedStatement, releaseClient, type Pool } from "@steward/platform";
import type { PoolClient } from "pg";
import type { IdempotencyStore, StoredToolResult } from "../../app/idempotency-store";

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

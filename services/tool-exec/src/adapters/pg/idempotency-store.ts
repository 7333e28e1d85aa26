import type { Pool } from "@steward/platform";

export interface StoredToolResult {
  readonly resultCode: string;
  readonly result: { result: unknown; evidence: unknown[] };
}

/** Idempotency records of tool results, by run and fingerprint. */
export interface IdempotencyStore {
  find(runId: string, fingerprint: string): Promise<StoredToolResult | null>;
  /** Stores the result unless one exists; returns whichever is stored (the first writer wins). */
  save(runId: string, fingerprint: string, toolName: string, value: StoredToolResult): Promise<StoredToolResult>;
}

export function createPgIdempotencyStore(pool: Pool): IdempotencyStore {
  const find = async (runId: string, fingerprint: string): Promise<StoredToolResult | null> => {
    const { rows } = await pool.query<{ result_code: string; result: StoredToolResult["result"] }>(
      "SELECT result_code, result FROM tool_results WHERE run_id = $1 AND fingerprint = $2",
      [runId, fingerprint],
    );
    return rows[0] ? { resultCode: rows[0].result_code, result: rows[0].result } : null;
  };
  return {
    find,
    async save(runId, fingerprint, toolName, value) {
      await pool.query(
        `INSERT INTO tool_results (run_id, fingerprint, tool_name, result_code, result)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (run_id, fingerprint) DO NOTHING`,
        [runId, fingerprint, toolName, value.resultCode, JSON.stringify(value.result)],
      );
      return (await find(runId, fingerprint)) ?? value;
    },
  };
}

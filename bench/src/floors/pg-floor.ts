import pg from "pg";
import { afterIdle, closedLoop, repeated, summarize, type IdlePause, type Repeated, type Summary } from "../stats";

/** One single-row transaction: BEGIN, INSERT one row, COMMIT (synchronous_commit as the server has it). */
async function transaction(client: pg.PoolClient, payload: string): Promise<void> {
  await client.query("BEGIN");
  await client.query("INSERT INTO bench_floor (payload) VALUES ($1)", [payload]);
  await client.query("COMMIT");
}

// About the size of a run event's data.
const PAYLOAD = JSON.stringify({ step_no: 3, call_id: "call_3", tool_name: "test_counter", arguments: '{"key":"k3"}', note: "x".repeat(200) });

export interface PgFloor {
  readonly latency: Summary;
  /** The same transaction, each after an idle pause (`options.idle`). */
  readonly afterIdle: Summary;
  /** Transactions/s at each concurrency. */
  readonly rate: Record<number, Repeated>;
  readonly settings: Record<string, string>;
}

/**
 * PostgreSQL's floor: latency of a single-row transaction one at a time (back to back, and each after an idle
 * pause), and the transaction rate at the given concurrencies (closed loop, one connection per client).
 */
export async function measurePgFloor(
  databaseUrl: string,
  options: { samples: number; windowMs: number; repeats: number; concurrencies: number[]; idle: IdlePause },
): Promise<PgFloor> {
  const maxC = Math.max(...options.concurrencies);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: maxC, application_name: "steward-bench-floor" });
  try {
    await pool.query(
      "CREATE TABLE IF NOT EXISTS bench_floor (id bigserial PRIMARY KEY, payload jsonb NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())",
    );
    const { rows } = await pool.query<{ name: string; setting: string }>(
      "SELECT name, setting FROM pg_settings WHERE name IN ('fsync','synchronous_commit','wal_sync_method','commit_delay','max_connections','shared_buffers','server_version')",
    );
    const settings = Object.fromEntries(rows.map((r) => [r.name, r.setting]));
    // Open every connection up front so that connecting is not measured.
    const clients = await Promise.all(Array.from({ length: maxC }, () => pool.connect()));
    try {
      for (let i = 0; i < 200; i++) await transaction(clients[0], PAYLOAD); // warm-up
      const samples: number[] = [];
      for (let i = 0; i < options.samples; i++) {
        const t0 = performance.now();
        await transaction(clients[0], PAYLOAD);
        samples.push(performance.now() - t0);
      }
      const idle = await afterIdle(options.idle, () => transaction(clients[0], PAYLOAD));
      const rate: Record<number, Repeated> = {};
      for (const c of options.concurrencies) {
        await closedLoop(c, Math.min(1000, options.windowMs / 2), (slot) => transaction(clients[slot], PAYLOAD)); // warm-up
        const values: number[] = [];
        for (let r = 0; r < options.repeats; r++) {
          let done = 0;
          const elapsed = await closedLoop(c, options.windowMs, async (slot) => {
            await transaction(clients[slot], PAYLOAD);
            done++;
          });
          values.push((done / elapsed) * 1000);
        }
        rate[c] = repeated(values);
      }
      return { latency: summarize(samples), afterIdle: summarize(idle), rate, settings };
    } finally {
      for (const c of clients) c.release();
    }
  } finally {
    await pool.end();
  }
}

import type { Pool } from "@steward/platform";
import { waitFor } from "./wait-for";

/**
 * Resolves once a statement inserting events into the pool's database waits on a lock (another transaction's
 * uncommitted row), so that a spec can let that transaction go knowing the statement met it; bounded at 10 s.
 */
export async function untilAnEventInsertWaits(pool: Pool, what: string): Promise<void> {
  await waitFor(
    async () => {
      const { rows } = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO events%'`,
      );
      return rows[0].n > 0 ? true : undefined;
    },
    { timeoutMs: 10_000, what },
  );
}

import type { Pool } from "pg";

/**
 * Stands in for autovacuum between phases: `VACUUM (ANALYZE)` of the bench's database when the server runs with
 * autovacuum off, as this machine's does (its CI configuration). A phase updates runs and outbox rows by the
 * thousand; without a vacuum their old versions stay in every index, the partial ones a writer looks up included,
 * and each later phase pays for them: a POST window after the steward phases cost PostgreSQL 0.34 ms of CPU per POST
 * against 0.18 ms on a fresh database (docs/performance.md, "Session 34"). A server in service keeps up with this
 * itself. Nothing is vacuumed during a phase. Returns how long it took, or null when autovacuum is on.
 */
export async function vacuumBetweenPhases(pool: Pool): Promise<number | null> {
  const { rows } = await pool.query<{ on: boolean }>("SELECT current_setting('autovacuum')::bool AS on");
  if (rows[0].on) return null;
  const started = performance.now();
  await pool.query("VACUUM (ANALYZE)");
  return performance.now() - started;
}

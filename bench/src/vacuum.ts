import type { Pool } from "pg";

/**
 * Stands in for autovacuum between phases: `VACUUM (ANALYZE)` of the bench's database when the server runs with
 * autovacuum off, as this machine's does (its CI configuration). A phase updates runs and outbox rows by the
 * thousand; without a vacuum their old versions stay in every index, the partial ones the writers look up included,
 * and every later phase pays for them (docs/performance.md, "Autovacuum", measures how much). A server in service
 * keeps up with this itself. Nothing is vacuumed during a phase. Returns how long it took, or null when autovacuum
 * is on.
 */
export async function vacuumBetweenPhases(pool: Pool): Promise<number | null> {
  const { rows } = await pool.query<{ on: boolean }>("SELECT current_setting('autovacuum')::bool AS on");
  if (rows[0].on) return null;
  const started = performance.now();
  await pool.query("VACUUM (ANALYZE)");
  return performance.now() - started;
}

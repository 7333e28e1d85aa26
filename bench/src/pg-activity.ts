import type { Pool } from "pg";

/** What PostgreSQL did for this database (pg_stat_database): transactions and rows written. */
export interface PgActivity {
  readonly commits: number;
  readonly rollbacks: number;
  readonly inserted: number;
  readonly updated: number;
  readonly deleted: number;
}

async function read(pool: Pool): Promise<PgActivity> {
  const client = await pool.connect();
  try {
    await client.query("SELECT pg_stat_clear_snapshot()");
    const { rows } = await client.query<{ c: string; r: string; i: string; u: string; d: string }>(
      `SELECT xact_commit AS c, xact_rollback AS r, tup_inserted AS i, tup_updated AS u, tup_deleted AS d
         FROM pg_stat_database WHERE datname = current_database()`,
    );
    const r = rows[0];
    return { commits: Number(r.c), rollbacks: Number(r.r), inserted: Number(r.i), updated: Number(r.u), deleted: Number(r.d) };
  } finally {
    client.release();
  }
}

/**
 * Counts this database's transactions and written rows over a window. PostgreSQL 15 backends flush their
 * counters at most once a second, so the stop waits 1.1 s first; each count still includes the reading
 * transactions themselves (2) and anything else using the database meanwhile.
 */
export async function pgActivityMeter(pool: Pool): Promise<{ stop(): Promise<PgActivity> }> {
  const before = await read(pool);
  return {
    async stop() {
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const after = await read(pool);
      return {
        commits: after.commits - before.commits,
        rollbacks: after.rollbacks - before.rollbacks,
        inserted: after.inserted - before.inserted,
        updated: after.updated - before.updated,
        deleted: after.deleted - before.deleted,
      };
    },
  };
}

export const noActivity: PgActivity = { commits: 0, rollbacks: 0, inserted: 0, updated: 0, deleted: 0 };

/** Two windows' counts together. */
export function addActivity(a: PgActivity, b: PgActivity): PgActivity {
  return { commits: a.commits + b.commits, rollbacks: a.rollbacks + b.rollbacks, inserted: a.inserted + b.inserted, updated: a.updated + b.updated, deleted: a.deleted + b.deleted };
}

export function perUnitActivity(a: PgActivity, n: number): PgActivity {
  const d = (x: number) => (n > 0 ? x / n : Number.NaN);
  return { commits: d(a.commits), rollbacks: d(a.rollbacks), inserted: d(a.inserted), updated: d(a.updated), deleted: d(a.deleted) };
}

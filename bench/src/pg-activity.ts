import type { Pool } from "pg";

/**
 * What PostgreSQL did for this database (pg_stat_database): transactions and rows written; and the WAL it
 * wrote (pg_stat_wal, the whole server): bytes and full-page images, the first change of a page after a
 * checkpoint began, which writes the whole page.
 */
export interface PgActivity {
  readonly commits: number;
  readonly rollbacks: number;
  readonly inserted: number;
  readonly updated: number;
  readonly deleted: number;
  readonly walBytes: number;
  readonly walFullPages: number;
}

async function read(pool: Pool): Promise<PgActivity> {
  const client = await pool.connect();
  try {
    await client.query("SELECT pg_stat_clear_snapshot()");
    const { rows } = await client.query<{ c: string; r: string; i: string; u: string; d: string; wb: string; wf: string }>(
      `SELECT xact_commit AS c, xact_rollback AS r, tup_inserted AS i, tup_updated AS u, tup_deleted AS d,
              w.wal_bytes AS wb, w.wal_fpi AS wf
         FROM pg_stat_database, pg_stat_wal w WHERE datname = current_database()`,
    );
    const r = rows[0];
    return {
      commits: Number(r.c),
      rollbacks: Number(r.r),
      inserted: Number(r.i),
      updated: Number(r.u),
      deleted: Number(r.d),
      walBytes: Number(r.wb),
      walFullPages: Number(r.wf),
    };
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
      return combined(after, before, (x, y) => x - y);
    },
  };
}

export const noActivity: PgActivity = { commits: 0, rollbacks: 0, inserted: 0, updated: 0, deleted: 0, walBytes: 0, walFullPages: 0 };

/** Each count of `a` with the same count of `b`. */
function combined(a: PgActivity, b: PgActivity, f: (x: number, y: number) => number): PgActivity {
  return {
    commits: f(a.commits, b.commits),
    rollbacks: f(a.rollbacks, b.rollbacks),
    inserted: f(a.inserted, b.inserted),
    updated: f(a.updated, b.updated),
    deleted: f(a.deleted, b.deleted),
    walBytes: f(a.walBytes, b.walBytes),
    walFullPages: f(a.walFullPages, b.walFullPages),
  };
}

/** Two windows' counts together. */
export function addActivity(a: PgActivity, b: PgActivity): PgActivity {
  return combined(a, b, (x, y) => x + y);
}

export function perUnitActivity(a: PgActivity, n: number): PgActivity {
  return combined(a, a, (x) => (n > 0 ? x / n : Number.NaN));
}

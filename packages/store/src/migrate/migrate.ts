import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import pg from "pg";

/** The migrations that ship with this package, in the order they apply. */
export const migrationsDir = join(__dirname, "..", "..", "migrations");

/**
 * Applies every `NNN_name.sql` file not yet recorded in `schema_migrations`, each in its own transaction.
 * An advisory lock makes concurrent starters wait for one another instead of racing.
 */
export async function migrate(connectionString: string, dir = migrationsDir): Promise<string[]> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock(hashtext('steward.migrate'))");
    await client.query("CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())");
    const done = new Set((await client.query<{ name: string }>("SELECT name FROM schema_migrations")).rows.map((r) => r.name));
    const files = (await readdir(dir)).filter((f) => /^\d{3}_[\w-]+\.sql$/.test(f)).sort();
    const applied: string[] = [];
    for (const file of files) {
      if (done.has(file)) continue;
      const sql = await readFile(join(dir, file), "utf8");
      await client.query("BEGIN");
      try {
        await client.query(sql);
        await client.query("INSERT INTO schema_migrations (name) VALUES ($1)", [file]);
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK");
        throw new Error(`migration ${file} failed`, { cause: err });
      }
      applied.push(file);
    }
    return applied;
  } finally {
    await client.query("SELECT pg_advisory_unlock(hashtext('steward.migrate'))").catch(() => undefined);
    await client.end();
  }
}

/** Creates the database named in the URL when it does not exist yet (connecting to `postgres` to do so). */
export async function ensureDatabase(connectionString: string): Promise<void> {
  const url = new URL(connectionString);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ""));
  if (!name) return;
  url.pathname = "/postgres";
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    const found = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (found.rowCount === 0) {
      await admin.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`).catch((err: { code?: string }) => {
        if (err.code !== "42P04") throw err; // created meanwhile by another starter
      });
    }
  } finally {
    await admin.end();
  }
}

/**
 * Drops the database named in the URL, for test suites and benchmarks that create their own. Waits (at most
 * `idleTimeoutMs`) for its other sessions to end first: a pool's `end()` resolves before its backends are
 * gone, and a FORCE drop at that moment would kill a client a pool still holds.
 */
export async function dropDatabase(connectionString: string, idleTimeoutMs = 10_000): Promise<void> {
  const url = new URL(connectionString);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ""));
  url.pathname = "/postgres";
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    const deadline = Date.now() + idleTimeoutMs;
    while (Date.now() < deadline) {
      const { rows } = await admin.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [
        name,
      ]);
      if (rows[0].n === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await admin.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

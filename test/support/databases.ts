import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { createPool, type Pool } from "@steward/platform";
import { dropDatabase, ensureDatabase, migrate } from "@steward/store";

/** The server the suites create their databases on. */
export const serverUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export function databaseUrl(name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** The datasets database beside an application database (`x` → `x_datasets`), where the data tools read. */
export function datasetsUrl(url: string): string {
  const u = new URL(url);
  u.pathname = `${u.pathname}_datasets`;
  return u.toString();
}

/** A fresh, migrated database for one test file; `drop()` removes it and its datasets database. */
export async function freshDatabase(prefix = "steward_test"): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  const url = databaseUrl(name);
  await ensureDatabase(url);
  await migrate(url);
  return {
    url,
    drop: async () => {
      await dropDatabase(url);
      await dropDatabase(datasetsUrl(url));
    },
  };
}

/**
 * A fresh, migrated database and a pool on it for the test file that calls this (its beforeAll / afterAll
 * hooks are registered here): read `pool` and `url` inside tests and hooks, not at the top level.
 */
export function useFreshDatabase(prefix: string, poolMax = 4): { readonly pool: Pool; readonly url: string } {
  let db: { url: string; drop(): Promise<void> } | undefined;
  let pool: Pool | undefined;
  beforeAll(async () => {
    db = await freshDatabase(prefix);
    pool = createPool(db.url, { max: poolMax });
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });
  return {
    get pool() {
      if (!pool) throw new Error("the database is made in beforeAll");
      return pool;
    },
    get url() {
      if (!db) throw new Error("the database is made in beforeAll");
      return db.url;
    },
  };
}

/**
 * Turns autovacuum (and autoanalyze) off for every table of the pool's database, for a spec that counts the
 * database's commits in pg_stat_database: an autovacuum worker's transactions count there too, and on a busy
 * machine one lands inside the counted window now and then.
 */
export async function withoutAutovacuum(pool: Pick<Pool, "query">): Promise<void> {
  await pool.query(`DO $$
    DECLARE t regclass;
    BEGIN
      FOR t IN SELECT c.oid::regclass FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE c.relkind IN ('r', 'p', 'm') AND n.nspname NOT IN ('pg_catalog', 'information_schema') LOOP
        EXECUTE format('ALTER TABLE %s SET (autovacuum_enabled = off)', t);
      END LOOP;
    END $$`);
}

/** A pool that records the text of every statement sent through it (what a component writes, and how often). */
export function recordingPool(pool: () => Pool): { readonly pool: Pool; readonly statements: string[] } {
  const statements: string[] = [];
  const recording = {
    // A text with its values, or a query config (a prepared statement names its text).
    query: (query: string | { text: string }, values?: unknown[]) => {
      statements.push(typeof query === "string" ? query : query.text);
      return pool().query(query as string, values);
    },
  } as unknown as Pool;
  return { pool: recording, statements };
}

/**
 * What two suites loading the dataset into their own databases at once may meet on the cluster-wide reader role
 * (made twice: 23505, 42710; its settings altered twice: XX000 "tuple concurrently updated"). The script's
 * advisory lock cannot keep them apart, since PostgreSQL scopes advisory locks to one database; the script is
 * one transaction, rolled back whole, so it is run again.
 */
const ROLE_RACES = new Set(["23505", "42710", "XX000"]);

/** Loads the demo dataset (and the read-only role of the data tools) into the datasets database of `appUrl`. */
export async function loadDemoDataset(appUrl: string): Promise<void> {
  const url = datasetsUrl(appUrl);
  await ensureDatabase(url);
  const sql = readFileSync(join(__dirname, "..", "..", "infra", "demo", "dataset.sql"), "utf8");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await client.query(sql);
        return;
      } catch (err) {
        if (attempt >= 5 || !ROLE_RACES.has((err as { code?: string }).code ?? "")) throw err;
        await new Promise((resolve) => setTimeout(resolve, 20 * attempt));
      }
    }
  } finally {
    await client.end();
  }
}

/** A unique NATS namespace so that a suite's streams and subjects are its own. */
export function freshNamespace(prefix = "t"): string {
  return `${prefix}${randomBytes(5).toString("hex")}`;
}

export const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";

/** A second dataset for the per-tenant suites: globex's ledger, in a schema of its own. */
const LEDGER_SQL = `
  CREATE SCHEMA IF NOT EXISTS ledger_data;
  CREATE TABLE IF NOT EXISTS ledger_data.accounts (id integer PRIMARY KEY, owner text NOT NULL, balance numeric NOT NULL);
  INSERT INTO ledger_data.accounts VALUES (1, 'Globex treasury', 1000000), (2, 'Globex payroll', 250000) ON CONFLICT DO NOTHING;
  GRANT USAGE ON SCHEMA ledger_data TO steward_reader;
  GRANT SELECT ON ALL TABLES IN SCHEMA ledger_data TO steward_reader;`;

/**
 * Loads the ledger dataset into the (existing) database at `url`, readable by the demo dataset's reader role,
 * which must exist already (loadDemoDataset makes it).
 */
export async function loadLedgerDataset(url: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(LEDGER_SQL).finally(() => admin.end());
}

/** `url` as the datasets' reader role sees it (no password: trust auth on the test server). */
export function asDatasetReader(url: string): string {
  const u = new URL(url);
  u.username = "steward_reader";
  u.password = "";
  return u.toString();
}

/** Advisory locks in the pool's database (pg_locks shows the whole server's): granted, or waited for. */
export async function advisoryLocks(pool: Pool, granted: boolean): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_locks
      WHERE locktype = 'advisory' AND granted = $1 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    [granted],
  );
  return rows[0].n;
}

import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { ensureDatabase, migrate } from "@steward/store";

/** The server the suites create their databases on. */
export const serverUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export function databaseUrl(name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A fresh, migrated database for one test file; `drop()` removes it. */
export async function freshDatabase(prefix = "steward_test"): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  const url = databaseUrl(name);
  await ensureDatabase(url);
  await migrate(url);
  return {
    url,
    async drop() {
      const admin = new pg.Client({ connectionString: serverUrl });
      await admin.connect();
      try {
        // pool.end() resolves before its backends are gone; a FORCE drop at that moment would terminate a
        // client still attached to a pool, which then emits an unhandled error. Wait (bounded) for idle.
        const deadline = Date.now() + 10_000;
        while (Date.now() < deadline) {
          const { rows } = await admin.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
            [name],
          );
          if (rows[0].n === 0) break;
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    },
  };
}

/** Loads the demo dataset (and the read-only role of the data tools) into a database. */
export async function loadDemoDataset(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(readFileSync(join(__dirname, "..", "..", "infra", "demo", "dataset.sql"), "utf8"));
  } catch (err) {
    // Two suites creating the cluster-wide role at once: the loser's role exists now, so run it again.
    if ((err as { code?: string }).code !== "23505") throw err;
    await client.query(readFileSync(join(__dirname, "..", "..", "infra", "demo", "dataset.sql"), "utf8"));
  } finally {
    await client.end();
  }
}

/** A unique NATS namespace so that a suite's streams and subjects are its own. */
export function freshNamespace(prefix = "t"): string {
  return `${prefix}${randomBytes(5).toString("hex")}`;
}

export const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";

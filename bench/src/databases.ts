import { randomBytes } from "node:crypto";
import { dropDatabase, ensureDatabase, migrate } from "@steward/store";

/** The server the bench creates its database on (BENCH_DATABASE_URL, else TEST_DATABASE_URL, else local). */
export const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";

export interface BenchDatabase {
  readonly name: string;
  readonly url: string;
  drop(): Promise<void>;
}

/** A fresh, migrated database; `drop()` removes it (after its sessions have gone, bounded). */
export async function freshDatabase(): Promise<BenchDatabase> {
  const name = `steward_bench_${randomBytes(5).toString("hex")}`;
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  await ensureDatabase(url.toString());
  await migrate(url.toString());
  return {
    name,
    url: url.toString(),
    drop: () => dropDatabase(url.toString()),
  };
}

export function freshNamespace(): string {
  return `bench${randomBytes(4).toString("hex")}`;
}

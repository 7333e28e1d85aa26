import { execFile, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "./free-port";
import { started } from "./started";

export type StopMode = "fast" | "immediate";

/** A PostgreSQL cluster of the suite's own, on a free port, that a test may stop and start. */
export interface PrivatePostgres {
  readonly port: number;
  readonly dataDir: string;
  /** The URL of `db` on this cluster, straight to the server (not through a proxy). */
  url(db?: string): string;
  start(): Promise<void>;
  stop(mode?: StopMode): Promise<void>;
  restart(mode?: StopMode): Promise<void>;
  /** The server log, for a failure message. */
  logTail(lines?: number): string;
  /** Stops the server (immediate) and removes its directory; safe to call twice. */
  teardown(): Promise<void>;
}

const PG_USER = "postgres";
/** Stays below the machine's shared cluster; room for two platforms' pools (4 services, ~60 connections each). */
const MAX_CONNECTIONS = 200;

function binDir(): string {
  const root = "/usr/lib/postgresql";
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) throw new Error(`no PostgreSQL binaries under ${root}`);
  return join(root, versions[0], "bin");
}

/**
 * Runs a PostgreSQL binary as the postgres user (the server refuses root); rejects with its output on failure.
 * Asynchronous, so that the test process (which also serves the fake model) never stalls during a restart.
 */
function runAsPostgres(bin: string, args: string[], what: string): Promise<void> {
  const asRoot = process.getuid?.() === 0;
  const [cmd, argv] = asRoot ? ["runuser", ["-u", PG_USER, "--", bin, ...args]] : [bin, args];
  return new Promise((resolve, reject) => {
    execFile(cmd, argv, { encoding: "utf8", timeout: 90_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${what} failed: ${err.message}\n${stderr || stdout}`));
      else resolve();
    });
  });
}

/**
 * initdb's a cluster in a fresh directory under /var/tmp (owned by postgres) on a free port and starts it.
 *
 * Durability settings: initdb runs with --no-sync, and the server with fsync=off. Every fault this suite
 * injects is a process-level one (fast or immediate shutdown, connections cut): the kernel's page cache
 * survives them, so what a committed transaction wrote is still there after crash recovery whether or not it
 * was flushed. fsync would only matter for a machine crash, which we never simulate, and on this shared
 * two-core machine it would cost every commit a disk flush.
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir();
  const port = await freePort();
  const dataDir = mkdtempSync("/var/tmp/steward-fault-pg-");
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { uid, gid } = userIds(PG_USER);
    chownSync(dataDir, uid, gid);
  }
  const pgdata = join(dataDir, "data");
  const logFile = join(dataDir, "server.log");
  let tornDown = false;
  const onExit = () => {
    // A jest run that dies without afterAll still must not leave a server behind.
    if (!tornDown && existsSync(join(pgdata, "postmaster.pid"))) {
      spawnSync(
        asRoot ? "runuser" : join(bin, "pg_ctl"),
        asRoot ? ["-u", PG_USER, "--", join(bin, "pg_ctl"), "stop", "-D", pgdata, "-m", "immediate"] : ["stop", "-D", pgdata, "-m", "immediate"],
        { timeout: 15_000 },
      );
    }
  };
  process.once("exit", onExit);

  try {
    await runAsPostgres(join(bin, "initdb"), ["-D", pgdata, "--no-sync", "-A", "trust", "-U", PG_USER, "-E", "UTF8", "--locale", "C"], "initdb");
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const options = [
    `-p ${port}`,
    "-c listen_addresses=127.0.0.1",
    `-c unix_socket_directories=${dataDir}`,
    `-c max_connections=${MAX_CONNECTIONS}`,
    "-c shared_buffers=16MB",
    "-c fsync=off",
    "-c full_page_writes=off",
    "-c log_min_messages=warning",
    "-c log_line_prefix='%m [%p] '",
  ].join(" ");

  const pgCtl = (args: string[], what: string): Promise<void> => runAsPostgres(join(bin, "pg_ctl"), ["-D", pgdata, ...args], what);

  const self: PrivatePostgres = {
    port,
    dataDir,
    url: (db = "postgres") => `postgres://${PG_USER}@127.0.0.1:${port}/${db}`,
    async start() {
      await pgCtl(["-l", logFile, "-o", options, "-w", "-t", "60", "start"], "pg_ctl start");
    },
    async stop(mode = "fast") {
      await pgCtl(["-m", mode, "-w", "-t", "60", "stop"], `pg_ctl stop -m ${mode}`);
    },
    async restart(mode = "fast") {
      await self.stop(mode);
      await self.start();
    },
    logTail(lines = 30) {
      const r = spawnSync("tail", ["-n", String(lines), logFile], { encoding: "utf8" });
      return r.stdout ?? "";
    },
    async teardown() {
      if (tornDown) return;
      tornDown = true;
      process.removeListener("exit", onExit);
      if (existsSync(join(pgdata, "postmaster.pid"))) {
        try {
          await pgCtl(["-m", "immediate", "-w", "-t", "30", "stop"], "pg_ctl stop");
        } catch {
          // already stopped
        }
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return started(self);
}

function userIds(name: string): { uid: number; gid: number } {
  const r = spawnSync("id", ["-u", name], { encoding: "utf8" });
  const g = spawnSync("id", ["-g", name], { encoding: "utf8" });
  if (r.status !== 0 || g.status !== 0) throw new Error(`no user ${name}`);
  return { uid: Number(r.stdout.trim()), gid: Number(g.stdout.trim()) };
}

/** Runs `sql` on `url` with a short-lived client. */
export async function execSql(url: string, sql: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end();
  }
}

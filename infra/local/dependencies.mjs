// Brings up what Steward needs on this machine: its npm dependencies and build, PostgreSQL and NATS with
// JetStream. Servers already reachable at DATABASE_URL / NATS_URL are used as they are; otherwise a local
// one is started under the Steward home folder.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, chownSync, openSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { root, stewardHome } from "./paths.mjs";
import { isRecordedProcess, readRunFile, removeRunFile, stopProcess, writeRunFile } from "./run-files.mjs";

export const defaults = {
  DATABASE_URL: "postgres://postgres@127.0.0.1:5432/steward",
  NATS_URL: "nats://127.0.0.1:4222",
};

export function say(text) {
  process.stderr.write(`steward: ${text}\n`);
}

function run(command, args, options = {}) {
  const r = spawnSync(command, args, { cwd: root, stdio: ["ignore", "inherit", "inherit"], ...options });
  if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} failed (exit ${r.status ?? r.signal})`);
}

/** Installs the npm dependencies when node_modules is missing or older than the lock file. */
export function ensureInstalled() {
  const marker = join(root, "node_modules", ".package-lock.json");
  if (existsSync(marker)) return;
  say("installing dependencies (npm ci)");
  run("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"]);
}

/** Builds every package and service (generates the gRPC code first). */
export function build() {
  say("building");
  run("npx", ["turbo", "run", "build", "--output-logs=errors-only", "--log-prefix=none"]);
}

/** True when something accepts TCP connections at host:port within timeoutMs. */
export function reachable(host, port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

async function waitReachable(host, port, what, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await reachable(host, port)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} did not come up on ${host}:${port} within ${timeoutMs} ms`);
}

function isLocal(host) {
  return ["127.0.0.1", "localhost", "::1", "[::1]"].includes(host);
}

function aptInstall(pkg) {
  if (process.getuid?.() !== 0) throw new Error(`${pkg} is not installed; install it (apt-get install ${pkg}) or point Steward at a running server`);
  say(`installing ${pkg} from Debian's packages`);
  run("apt-get", ["update", "-qq"]);
  run("apt-get", ["install", "-y", "-qq", pkg], { env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
}

function postgresBin() {
  const base = "/usr/lib/postgresql";
  const versions = existsSync(base)
    ? readdirSync(base)
        .filter((v) => existsSync(join(base, v, "bin", "initdb")))
        .sort()
    : [];
  return versions.length > 0 ? join(base, versions[versions.length - 1], "bin") : null;
}

/**
 * Uses PostgreSQL at DATABASE_URL if it answers; otherwise starts a local cluster under the home folder and
 * records it in run/postgres.json. Resolves `{started, recorded}`: `recorded` when the server that answers is
 * one Steward started earlier and left running (`npm run stop` stops it); with `started`, `stop()` too.
 */
export async function ensurePostgres(databaseUrl) {
  const url = new URL(databaseUrl);
  const host = url.hostname;
  const port = Number(url.port || 5432);
  if (await reachable(host, port)) return { started: false, recorded: postgresRecord()?.port === port };
  if (!isLocal(host)) throw new Error(`PostgreSQL at ${host}:${port} is not reachable`);
  let bin = postgresBin();
  if (!bin) {
    aptInstall("postgresql");
    bin = postgresBin();
  }
  const asRoot = process.getuid?.() === 0;
  // PostgreSQL refuses to run as root: as root the cluster belongs to the postgres user, outside /root.
  const dataDir = asRoot ? "/var/tmp/steward/pg" : join(stewardHome, "pg");
  const logFile = `${dataDir}.log`;
  mkdirSync(dataDir, { recursive: true });
  const as = (cmd, args) => (asRoot ? ["runuser", ["-u", "postgres", "--", cmd, ...args]] : [cmd, args]);
  if (asRoot) {
    const pw = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
    const uid = Number(pw.stdout.trim());
    chownSync(dataDir, uid, uid);
    chownSync("/var/tmp/steward", uid, uid);
  }
  if (!existsSync(join(dataDir, "PG_VERSION"))) {
    say(`creating a local PostgreSQL cluster in ${dataDir}`);
    run(...as(join(bin, "initdb"), ["-D", dataDir, "-U", url.username || "postgres", "-A", "trust", "--no-sync"]), { stdio: "ignore" });
  }
  say(`starting PostgreSQL on ${host}:${port}`);
  run(...as(join(bin, "pg_ctl"), ["-D", dataDir, "-l", logFile, "-w", "-o", `-p ${port} -c listen_addresses=127.0.0.1 -k /tmp`, "start"]));
  await waitReachable(host, port, "PostgreSQL");
  const pid = Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
  const record = { pid, dataDir, bin, asRoot, host, port, startedAt: new Date().toISOString() };
  writeRunFile("postgres.json", record);
  return { started: true, name: "PostgreSQL", pid, stop: () => stopPostgres(record) };
}

/** The PostgreSQL that Steward started and that still runs, as recorded; a stale record is removed. */
export function postgresRecord() {
  const record = readRunFile("postgres.json");
  if (record && isRecordedProcess(record.pid, "postgres")) return record;
  removeRunFile("postgres.json");
  return null;
}

/** Stops a PostgreSQL cluster Steward started (pg_ctl stop -m fast) and forgets it. */
export function stopPostgres(record) {
  const pgCtl = join(record.bin, "pg_ctl");
  const args = ["-D", record.dataDir, "stop", "-m", "fast", "-w"];
  const [cmd, argv] = record.asRoot ? ["runuser", ["-u", "postgres", "--", pgCtl, ...args]] : [pgCtl, args];
  const r = spawnSync(cmd, argv, { stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" });
  if (r.status !== 0 && isRecordedProcess(record.pid, "postgres")) {
    throw new Error(`could not stop PostgreSQL (pid ${record.pid}): ${(r.stderr || r.error?.message || "").trim()}`);
  }
  removeRunFile("postgres.json");
}

/**
 * Uses NATS at NATS_URL if it answers; otherwise starts nats-server with JetStream under the home folder and
 * records it in run/nats-server.json. Resolves like ensurePostgres, with `auth` when the server is one Steward
 * started with `configFile` (its users and permissions: natsServerConfig). A recorded server with users is told
 * to reload that file (SIGHUP), so that it has the users of this start.
 */
export async function ensureNats(natsUrl, { configFile } = {}) {
  const url = new URL(natsUrl);
  const host = url.hostname;
  const port = Number(url.port || 4222);
  if (await reachable(host, port)) {
    const record = natsRecord();
    const recorded = record?.port === port;
    const auth = recorded && Boolean(record.configFile) && record.configFile === configFile;
    if (auth) process.kill(record.pid, "SIGHUP");
    return { started: false, recorded, auth };
  }
  if (!isLocal(host)) throw new Error(`NATS at ${host}:${port} is not reachable`);
  const candidates = ["/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server"];
  let bin = candidates.find((c) => existsSync(c));
  if (!bin) {
    aptInstall("nats-server");
    bin = candidates.find((c) => existsSync(c));
  }
  const storeDir = join(stewardHome, "nats");
  mkdirSync(storeDir, { recursive: true });
  say(`starting nats-server with JetStream on ${host}:${port}`);
  const out = openSync(join(stewardHome, "nats-server.log"), "a");
  const config = configFile ? ["-c", configFile] : [];
  const child = spawn(bin, [...config, "-a", "127.0.0.1", "-p", String(port), "-js", "-sd", storeDir], {
    detached: true,
    stdio: ["ignore", out, out],
  });
  child.unref();
  const record = { pid: child.pid, bin, host, port, configFile: configFile ?? null, startedAt: new Date().toISOString() };
  writeRunFile("nats-server.json", record);
  await waitReachable(host, port, "NATS");
  return { started: true, auth: Boolean(configFile), name: "nats-server", pid: child.pid, stop: () => stopNats(record) };
}

/** The nats-server that Steward started and that still runs, as recorded; a stale record is removed. */
export function natsRecord() {
  const record = readRunFile("nats-server.json");
  if (record && isRecordedProcess(record.pid, "nats-server")) return record;
  removeRunFile("nats-server.json");
  return null;
}

/** Stops a nats-server Steward started (SIGTERM, then SIGKILL after 10 s) and forgets it. */
export async function stopNats(record) {
  if (isRecordedProcess(record.pid, "nats-server")) await stopProcess(record.pid);
  removeRunFile("nats-server.json");
}

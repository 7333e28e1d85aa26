// Brings up what Steward needs on this machine: its npm dependencies and build, PostgreSQL and NATS with
// JetStream. Servers already reachable at DATABASE_URL / NATS_URL are used as they are; otherwise a local
// one is started under the Steward home folder.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, chownSync, openSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { root, stewardHome } from "./paths.mjs";

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
  const versions = existsSync(base) ? readdirSync(base).filter((v) => existsSync(join(base, v, "bin", "initdb"))).sort() : [];
  return versions.length > 0 ? join(base, versions[versions.length - 1], "bin") : null;
}

/** Uses PostgreSQL at DATABASE_URL if it answers; otherwise starts a local cluster under the home folder. */
export async function ensurePostgres(databaseUrl) {
  const url = new URL(databaseUrl);
  const host = url.hostname;
  const port = Number(url.port || 5432);
  if (await reachable(host, port)) return { started: false };
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
  run(
    ...as(join(bin, "pg_ctl"), ["-D", dataDir, "-l", logFile, "-w", "-o", `-p ${port} -c listen_addresses=127.0.0.1 -k /tmp`, "start"]),
  );
  await waitReachable(host, port, "PostgreSQL");
  return { started: true };
}

/** Uses NATS at NATS_URL if it answers; otherwise starts nats-server with JetStream under the home folder. */
export async function ensureNats(natsUrl) {
  const url = new URL(natsUrl);
  const host = url.hostname;
  const port = Number(url.port || 4222);
  if (await reachable(host, port)) return { started: false };
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
  const child = spawn(bin, ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", storeDir], {
    detached: true,
    stdio: ["ignore", out, out],
  });
  child.unref();
  await waitReachable(host, port, "NATS");
  return { started: true };
}

#!/usr/bin/env node
// The README's first command, the way a newcomer runs it: a fresh clone with no node_modules, `npm start`,
// the curl its banner prints, `npx steward run … --follow`, the console and the API reference, then Ctrl-C.
// Twice: on this machine's PostgreSQL and NATS, and with DATABASE_URL/NATS_URL at ports where nothing
// answers (so npm start runs its own and must stop them). Node's built-ins only: nothing is installed yet.
// A failed step exits 1 with a line `first-run (<mode>): <step> failed: <why>`; every step prints its time.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { reachable as reachableAt } from "../infra/local/dependencies.mjs";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const QUESTION = "How long do I have to ask for a refund?";
const BANNER_MS = 5 * 60_000;
const RUN_MS = 60_000;
const STOP_MS = 30_000;

class StepFailed extends Error {}

const reachable = (port) => reachableAt("127.0.0.1", port);

/** A port nothing listens on now (the kernel's pick, released at once). */
function unusedPort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function until(probe, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new StepFailed(`${what} within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Live processes whose command line or working folder is inside `dir` (this script's own excepted). */
function processesIn(dir) {
  const found = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (stat.charAt(stat.lastIndexOf(")") + 2) === "Z") continue;
      const cmd = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ").trim();
      let cwd = "";
      try {
        cwd = readlinkSync(`/proc/${entry}/cwd`);
      } catch {
        // a process of another user, or gone
      }
      if (cmd.includes(dir) || cwd === dir || cwd.startsWith(`${dir}/`)) found.push(`${entry} ${cmd.slice(0, 120)}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

async function firstRun(mode) {
  const timings = [];
  let current = "";
  let started = Date.now();
  const step = (name) => {
    if (current) timings.push(`${current} ${((Date.now() - started) / 1000).toFixed(1)} s`);
    current = name;
    started = Date.now();
    if (name) process.stdout.write(`first-run (${mode.name}): ${name}\n`);
  };
  const clone = mkdtempSync(join(tmpdir(), "steward-first-run-"));
  const config = mkdtempSync(join(tmpdir(), "steward-first-run-config-"));
  const env = { ...process.env, ...mode.env, XDG_CONFIG_HOME: config };
  for (const name of [
    "STEWARD_URL",
    "STEWARD_TOKEN",
    "STEWARD_CONFIG",
    "STEWARD_HOME",
    "STEWARD_ENV",
    "STEWARD_TEST_HOOKS",
    "STEWARD_SKIP_BUILD",
    "GATEWAY_PORT",
    "HEALTH_PORT",
  ]) {
    delete env[name];
  }
  let launcher = null;
  let exited = null;
  let output = "";
  try {
    step("clone");
    const cloned = spawnSync("git", ["clone", "--quiet", repo, clone], { encoding: "utf8" });
    if (cloned.status !== 0) throw new StepFailed(cloned.stderr.trim());
    for (const port of [8080, 50051, 50052]) {
      if (await reachable(port)) throw new StepFailed(`port ${port}, which npm start uses, is taken by another process`);
    }

    step("npm start until its ready banner");
    launcher = spawn("npm", ["start"], { cwd: clone, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    exited = new Promise((resolve) => launcher.once("exit", (code, signal) => resolve({ code, signal })));
    let finished = null;
    exited.then((how) => (finished = how));
    for (const stream of [launcher.stdout, launcher.stderr]) stream.on("data", (chunk) => (output += chunk));
    await until(
      () => {
        if (finished) throw new StepFailed(`npm start exited (${finished.code ?? finished.signal}) before its banner`);
        return output.includes("Steward is running.") && output.includes("export STEWARD_TOKEN=") && /^\s*curl -s -X POST .*$/m.test(output);
      },
      BANNER_MS,
      "no ready banner",
    );
    const token = /export STEWARD_TOKEN=(\S+)/.exec(output)[1];
    const curl = /^\s*(curl -s -X POST .*)$/m.exec(output)[1];
    const gateway = /^\s*gateway\s+(http:\/\/\S+)/m.exec(output)[1];
    const api = (path) => fetch(`${gateway}${path}`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.json());
    const succeededWithEvidence = async (id) => {
      const run = await api(`/v1/agents/runs/${id}`);
      if (["failed", "cancelled"].includes(run.state)) throw new StepFailed(`run ${id} ended ${run.state}: ${JSON.stringify(run.error)}`);
      if (run.state !== "succeeded") return null;
      if (!(run.output?.evidence?.length > 0)) throw new StepFailed(`run ${id} succeeded without evidence`);
      return run;
    };

    step("the banner's curl, and its run to succeeded with evidence");
    const posted = spawnSync("bash", ["-c", curl], { cwd: clone, env: { ...env, STEWARD_TOKEN: token }, encoding: "utf8", timeout: 30_000 });
    let created;
    try {
      created = JSON.parse(posted.stdout);
    } catch {
      throw new StepFailed(`the curl answered no JSON (exit ${posted.status}): ${posted.stdout.slice(0, 300)}${posted.stderr.slice(0, 300)}`);
    }
    if (created.state !== "queued" || !created.id) throw new StepFailed(`the curl's answer is not a queued run: ${posted.stdout.slice(0, 300)}`);
    await until(() => succeededWithEvidence(created.id), RUN_MS, `run ${created.id} did not succeed`);

    step(`npx steward run "${QUESTION}" --follow`);
    const cli = spawnSync("npx", ["steward", "run", QUESTION, "--follow"], { cwd: clone, env, encoding: "utf8", timeout: RUN_MS + 120_000 });
    if (cli.status !== 0) throw new StepFailed(`exit ${cli.status ?? cli.signal}:\n${cli.stdout.slice(-1500)}${cli.stderr.slice(-1500)}`);
    const listed = await api("/v1/agents/runs?page_size=1&sort=created_at%20desc");
    const newest = listed.items?.[0];
    if (!newest || newest.id === created.id) throw new StepFailed(`the CLI's run is not in the caller's runs: ${JSON.stringify(listed).slice(0, 300)}`);
    if (!(await succeededWithEvidence(newest.id))) throw new StepFailed(`the CLI exited 0 but run ${newest.id} is ${newest.state}`);

    step("/console/ and /docs answer HTML");
    for (const path of ["/console/", "/docs"]) {
      const res = await fetch(`${gateway}${path}`);
      const type = res.headers.get("content-type") ?? "";
      const body = await res.text();
      if (res.status !== 200 || !type.startsWith("text/html") || !/<html/i.test(body)) {
        throw new StepFailed(`${path} answered ${res.status} ${type}`);
      }
    }

    step("Ctrl-C, and nothing left within 30 s");
    process.kill(-launcher.pid, "SIGINT");
    let left = [];
    await until(
      async () => {
        left = finished ? [] : [`npm start (pid ${launcher.pid})`];
        left.push(...processesIn(clone));
        for (const port of mode.ownPorts) if (await reachable(port)) left.push(`a server it started, on port ${port}`);
        return left.length === 0;
      },
      STOP_MS,
      "not everything stopped",
    ).catch(() => {
      throw new StepFailed(`still there ${STOP_MS / 1000} s after SIGINT: ${left.join("; ")}`);
    });
    for (const port of mode.machinePorts) {
      if (!(await reachable(port))) throw new StepFailed(`the machine's server on port ${port} was stopped; npm start must leave it running`);
    }
    step("");
    process.stdout.write(`first-run (${mode.name}): passed — ${timings.join(", ")}\n`);
    return true;
  } catch (err) {
    const why = err instanceof StepFailed ? err.message : err instanceof Error ? err.stack : String(err);
    process.stdout.write(`first-run (${mode.name}): ${current} failed: ${why}\n`);
    if (output) process.stdout.write(`first-run (${mode.name}): npm start's last output:\n${output.slice(-2000)}\n`);
    return false;
  } finally {
    if (launcher && exited) {
      try {
        process.kill(-launcher.pid, "SIGINT");
      } catch {
        // already gone
      }
      await Promise.race([exited, new Promise((r) => setTimeout(r, STOP_MS))]);
      try {
        process.kill(-launcher.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    // Whatever a failed stop left: npm run stop from the clone knows what its npm start recorded.
    spawnSync("node", [join(clone, "infra", "local", "stop.mjs")], { cwd: clone, env, stdio: "ignore", timeout: 60_000 });
    rmSync(clone, { recursive: true, force: true });
    rmSync(config, { recursive: true, force: true });
  }
}

const pgPort = await unusedPort();
let natsPort = await unusedPort();
while (natsPort === pgPort) natsPort = await unusedPort();
const modes = [
  { name: "this machine's PostgreSQL and NATS", env: {}, ownPorts: [], machinePorts: [5432, 4222] },
  {
    name: "its own PostgreSQL and NATS",
    env: { DATABASE_URL: `postgres://postgres@127.0.0.1:${pgPort}/steward`, NATS_URL: `nats://127.0.0.1:${natsPort}` },
    ownPorts: [pgPort, natsPort],
    machinePorts: [],
  },
];
let ok = true;
for (const mode of modes) ok = (await firstRun(mode)) && ok;
process.exit(ok ? 0 : 1);

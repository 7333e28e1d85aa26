#!/usr/bin/env node
// `npm test`: installs and builds if needed, makes sure PostgreSQL and NATS are up, runs every jest suite
// against them, and ends with one line `N passed, N failed` taken from jest's own counts.
//
// jest runs in its own process group under a watchdog: once it has written its results it gets
// JEST_EXIT_GRACE_MS to exit; a jest kept alive by a leaked handle, or a process a test left behind, is named
// and killed rather than holding the run open. The whole run is bounded by STEWARD_TEST_TIMEOUT_MIN.
// Seen here (2026-12-01, Node 20.20): jest's event loop had ended and the process sat in Node's own
// teardown (FreeEnvironment → CleanupHandles spinning in uv_run), so jest never printed its "did not exit"
// warning; the stack the watchdog prints shows which case a hang is.
//
// The container suite (test/containers) runs when a container engine is there (STEWARD_CONTAINERS=auto, the
// default): infra/containers/setup.sh brings the images up to date first. STEWARD_CONTAINERS=1 requires it
// (`npm run test:containers`, CI); =0 skips it. A skipped suite is said so, never silently dropped.
//
// jest runs STEWARD_TEST_WORKERS suites at once (default 3; most suites wait on processes, PostgreSQL and
// NATS rather than compute: docs/testing.md), the longest first (jest-sequencer.cjs). `--quick` (`npm run
// test:quick`) runs only the specs that start no platform: the unit and in-process specs of packages/, apps/,
// services/, bench/ and test/local.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, watch } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build, defaults, ensureInstalled, ensureNats, ensurePostgres } from "./dependencies.mjs";
import { root } from "./paths.mjs";
import { containerSuite, leaveOut } from "./containers.mjs";

const EXIT_GRACE_MS = Number(process.env.JEST_EXIT_GRACE_MS || 20_000);
const TIMEOUT_MS = Number(process.env.STEWARD_TEST_TIMEOUT_MIN || 60) * 60_000;

function finish(passed, failed, ok) {
  process.stdout.write(`${passed} passed, ${failed} failed\n`);
  process.exit(ok && failed === 0 && passed > 0 ? 0 : 1);
}

/** `pid command` of every live (not zombie) process in the group but its leader. */
function groupMembers(pgid) {
  const r = spawnSync("ps", ["-e", "-o", "pid=,pgid=,stat=,args="], { encoding: "utf8" });
  return (r.stdout || "")
    .split("\n")
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(line))
    .filter((m) => m && Number(m[2]) === pgid && Number(m[1]) !== pgid && !m[3].startsWith("Z"))
    .map((m) => `${m[1]} ${m[4].slice(0, 160)}`);
}

/**
 * What a process that outlived its results is doing, for the report: its state and kernel wait channel, and
 * (where gdb is installed) the native stack of its main thread — epoll_wait means a handle keeps the event
 * loop alive, a futex or a JavaScript frame means something is blocking it.
 */
function whatItDoes(pid) {
  const read = (file) => {
    try {
      return readFileSync(`/proc/${pid}/${file}`, "utf8");
    } catch {
      return "";
    }
  };
  const state = /^State:\s*(.*)$/m.exec(read("status"))?.[1] ?? "?";
  const threads = /^Threads:\s*(.*)$/m.exec(read("status"))?.[1] ?? "?";
  const lines = [`    state ${state}, wchan ${read("wchan") || "?"}, threads ${threads}`];
  const gdb = spawnSync("gdb", ["-p", String(pid), "-batch", "-nx", "-ex", "bt 12"], { encoding: "utf8", timeout: 20_000 });
  if (gdb.status === 0)
    lines.push(
      ...gdb.stdout
        .split("\n")
        .filter((l) => /^#\d+/.test(l))
        .map((l) => `    ${l.slice(0, 160)}`),
    );
  return lines;
}

/** True when `args` (a pattern, say) select no suite of test/containers: their images need not be prepared. */
function selectsNoContainerSuite(args) {
  if (args.length === 0) return false;
  const r = spawnSync("npx", ["jest", "--listTests", ...args], { cwd: root, encoding: "utf8" });
  return r.status === 0 && !r.stdout.split("\n").some((path) => path.includes("/test/containers/"));
}

function killGroup(pgid) {
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // the group is already empty
  }
}

/** How long each step before jest took, for the report at the end. */
const steps = [];
let stepStarted = Date.now();
function stepDone(name) {
  steps.push(`${name} ${((Date.now() - stepStarted) / 1000).toFixed(0)} s`);
  stepStarted = Date.now();
}

/** The `n` suites that took longest, one line each, from jest's results (its own start and end per file). */
function slowestSuites(results, n = 10) {
  const rows = results.testResults
    .map((r) => ({ file: r.name.slice(root.length + 1), seconds: (r.endTime - r.startTime) / 1000 }))
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, n);
  return rows.map((r) => `  ${r.seconds.toFixed(1).padStart(6)} s  ${r.file}`).join("\n");
}

ensureInstalled();
stepDone("install");
build();
stepDone("build");
// The typecheck, the layers' import rules (.dependency-cruiser.cjs), ESLint and Prettier need the sources alone:
// they run beside PostgreSQL, NATS and the container images, and are waited for before jest starts.
const run = (command, args) => new Promise((resolve) => spawn(command, args, { cwd: root, stdio: "inherit" }).once("exit", (code) => resolve(code)));
const typecheck = run("npx", ["tsc", "-p", "tsconfig.json"]);
const dependencyRules = run("npm", ["run", "--silent", "lint:deps"]);
const lint = run("npx", ["eslint", "."]);
const format = run("npx", ["prettier", "--check", "--log-level", "warn", "."]);
const serverUrl = process.env.TEST_DATABASE_URL || defaults.DATABASE_URL.replace(/\/steward$/, "/postgres");
await ensurePostgres(serverUrl);
await ensureNats(process.env.NATS_URL || defaults.NATS_URL);
stepDone("PostgreSQL and NATS");

const quick = process.argv.includes("--quick");
const given = process.argv.slice(2).filter((a) => a !== "--quick");
const containers = quick
  ? leaveOut(
      ["e2e", "faults", "browser", "containers"],
      "ran the quick specs only (--quick): test/e2e, test/faults, test/browser and test/containers were left out",
    )
  : selectsNoContainerSuite(given)
    ? leaveOut(["containers"], "the arguments select no suite of test/containers: its images were not prepared")
    : await containerSuite();
stepDone("container images");
const typechecked = (await typecheck) === 0;
const layered = (await dependencyRules) === 0;
const linted = (await lint) === 0;
const formatted = (await format) === 0;
stepDone("typecheck, dependency rules, ESLint and Prettier (after them)");
if (!layered) process.stderr.write("steward: an import breaks the dependency rules (npm run lint:deps, .dependency-cruiser.cjs)\n");
if (!linted) process.stderr.write("steward: ESLint found problems (npm run lint, eslint.config.mjs)\n");
if (!formatted) process.stderr.write("steward: files are not formatted (npx prettier --write <files>, .prettierrc.json)\n");
if (!typechecked || !layered || !linted || !formatted || containers.failed) finish(0, 1, false);
const jestArgs = [...given, ...containers.jestArgs];

const outDir = mkdtempSync(join(tmpdir(), "steward-jest-"));
const out = join(outDir, "results.json");
const workers = process.env.STEWARD_TEST_WORKERS || "4";
const jest = spawn("npx", ["jest", "--ci", `--maxWorkers=${workers}`, "--json", `--outputFile=${out}`, ...jestArgs], {
  cwd: root,
  stdio: "inherit",
  detached: true,
  env: { ...process.env, ...containers.env, TEST_DATABASE_URL: serverUrl },
});
const forward = () => killGroup(jest.pid);
process.once("SIGINT", forward);
process.once("SIGTERM", forward);

let hung = null;
const exited = new Promise((resolve) => jest.once("exit", (code, signal) => resolve({ code, signal })));
const overall = setTimeout(() => {
  hung = `jest did not finish within ${TIMEOUT_MS / 60_000} min`;
  killGroup(jest.pid);
}, TIMEOUT_MS);
let graceTimer = null;
const watcher = watch(outDir, () => {
  if (graceTimer || !existsSync(out)) return;
  graceTimer = setTimeout(() => {
    hung = `jest wrote its results but had not exited ${EXIT_GRACE_MS / 1000} s later`;
    const left = groupMembers(jest.pid);
    const detail = left.flatMap((l) => [`  ${l}`, ...(/\bjest\b/.test(l) && /\bnode\b/.test(l) ? whatItDoes(Number(l.split(" ")[0])) : [])]);
    process.stderr.write(`steward: ${hung}; still running:\n${detail.join("\n")}\n`);
    killGroup(jest.pid);
  }, EXIT_GRACE_MS);
});
const { code } = await exited;
clearTimeout(overall);
clearTimeout(graceTimer);
watcher.close();

const leftovers = groupMembers(jest.pid);
if (leftovers.length > 0) {
  process.stderr.write(`steward: processes the tests left behind, now killed:\n${leftovers.map((l) => `  ${l}`).join("\n")}\n`);
  killGroup(jest.pid);
}

await containers.afterwards();

let passed = 0;
let failed = 0;
try {
  const results = JSON.parse(readFileSync(out, "utf8"));
  passed = results.numPassedTests;
  failed = results.numFailedTests + (results.numRuntimeErrorTestSuites ?? 0);
  if (results.numPendingTests > 0) process.stderr.write(`steward: ${results.numPendingTests} tests skipped\n`);
  const wall = ((Date.now() - results.startTime) / 1000).toFixed(0);
  process.stderr.write(`steward: jest took ${wall} s with ${workers} workers, after ${steps.join(", ")}; the ten slowest suites:\n${slowestSuites(results)}\n`);
} catch {
  failed = Math.max(failed, 1);
}
if (hung) process.stderr.write(`steward: ${hung}\n`);
if (containers.skipped) process.stderr.write(`steward: ${containers.skipped}\n`);
// A jest that only failed to exit after writing complete results is reported above, not counted as a test
// failure; one stopped by the overall timeout never wrote results and fails.
finish(passed, failed, code === 0 || (hung !== null && existsSync(out)));

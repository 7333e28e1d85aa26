#!/usr/bin/env node
// `npm test`: installs and builds if needed, makes sure PostgreSQL and NATS are up, runs every jest suite
// against them, and ends with one line `N passed, N failed` taken from jest's own counts.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build, defaults, ensureInstalled, ensureNats, ensurePostgres } from "./dependencies.mjs";
import { root } from "./paths.mjs";

ensureInstalled();
build();
const typecheck = spawnSync("npx", ["tsc", "-p", "tsconfig.json"], { cwd: root, stdio: "inherit" });
if (typecheck.status !== 0) {
  process.stdout.write("0 passed, 1 failed\n");
  process.exit(1);
}
const serverUrl = process.env.TEST_DATABASE_URL || defaults.DATABASE_URL.replace(/\/steward$/, "/postgres");
await ensurePostgres(serverUrl);
await ensureNats(process.env.NATS_URL || defaults.NATS_URL);

const out = join(mkdtempSync(join(tmpdir(), "steward-jest-")), "results.json");
const jest = spawnSync(
  "npx",
  ["jest", "--ci", "--runInBand", "--json", `--outputFile=${out}`, ...process.argv.slice(2)],
  { cwd: root, stdio: "inherit", env: { ...process.env, TEST_DATABASE_URL: serverUrl } },
);
let passed = 0;
let failed = 0;
try {
  const results = JSON.parse(readFileSync(out, "utf8"));
  passed = results.numPassedTests;
  failed = results.numFailedTests + (results.numRuntimeErrorTestSuites ?? 0);
} catch {
  failed = Math.max(failed, 1);
}
process.stdout.write(`${passed} passed, ${failed} failed\n`);
process.exit(jest.status === 0 && failed === 0 && passed > 0 ? 0 : 1);

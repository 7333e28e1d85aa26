#!/usr/bin/env node
// The `steward` command. It runs the CLI's build (dist/); when that is missing (a fresh clone after
// `npm install`), it builds the CLI and what it depends on once, with turbo, and says so in one line.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const entry = join(here, "..", "dist", "main.js");
const root = join(here, "..", "..", "..");

if (!existsSync(entry)) {
  process.stderr.write("steward: building the CLI once (npx turbo run build --filter=@steward/cli...)\n");
  const turbo = join(root, "node_modules", ".bin", "turbo");
  const built = spawnSync(turbo, ["run", "build", "--filter=@steward/cli...", "--output-logs=errors-only"], {
    cwd: root,
    // Quiet unless it fails; then its output goes to stderr (stdout is the command's, a script may read it).
    stdio: ["ignore", "pipe", "pipe"],
    encoding: "utf8",
  });
  if (built.status !== 0 || !existsSync(entry)) {
    process.stderr.write(`${built.stdout ?? ""}${built.stderr ?? ""}`);
    process.stderr.write(`steward: the build failed${built.error ? ` (${built.error.message})` : ""}; run \`npm run build\` and try again\n`);
    process.exit(70);
  }
}

const { main } = createRequire(import.meta.url)(entry);
process.exitCode = await main(process.argv.slice(2));

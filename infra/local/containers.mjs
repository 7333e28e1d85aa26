// Whether `npm test` runs the container suite (test/containers), and what it needs to: an engine (podman
// here, behind the Docker-compatible socket) and images built from this tree by infra/containers/setup.sh.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { root } from "./paths.mjs";

const require = createRequire(import.meta.url);

function onPath(command) {
  return spawnSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" }).status === 0;
}

/** `export A=1 B=2` (setup.sh's last line) as an object. */
function exportsOf(line) {
  return Object.fromEntries(
    line
      .replace(/^export\s+/, "")
      .split(/\s+/)
      .filter((pair) => pair.includes("="))
      .map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]),
  );
}

/**
 * What jest runs with the suites under `test/<dir>/` left out, as containerSuite answers (`skipped` says why).
 * On the command line the ignore list replaces jest.config.js's: its entries go again.
 */
export function leaveOut(dirs, skipped) {
  const ignore = ["/node_modules/", "/dist/", `/test/(${dirs.join("|")})/`].map((p) => `--testPathIgnorePatterns=${p}`);
  return { jestArgs: ignore, env: {}, skipped, afterwards: async () => {} };
}

/**
 * Decides and prepares: `{jestArgs, env}` for jest, `skipped` (why, to print), `failed` (setup failed where
 * the suite is required), and `afterwards()` to remove what an interrupted run left behind.
 */
export async function containerSuite() {
  const mode = process.env.STEWARD_CONTAINERS ?? "auto";
  const skip = (why) => leaveOut(["containers"], why);
  if (mode === "0") return skip("skipped the container suite (test/containers): STEWARD_CONTAINERS=0");
  const sweeper = require(join(root, "infra", "containers", "sweep.cjs"));
  const engine = (process.env.DOCKER_HOST && (await sweeper.engineAnswers())) || onPath("podman");
  if (!engine) {
    const why = "no container engine answers (no podman, nothing at DOCKER_HOST); run infra/containers/setup.sh as root to get one";
    if (mode === "1") {
      process.stderr.write(`steward: the container suite is required (STEWARD_CONTAINERS=1) but ${why}\n`);
      return { failed: true };
    }
    return skip(`skipped the container suite (test/containers): ${why}`);
  }
  process.stderr.write("steward: preparing the container suite (infra/containers/setup.sh)\n");
  const setup = spawnSync("bash", [join(root, "infra", "containers", "setup.sh")], { cwd: root, stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" });
  const last = (setup.stdout ?? "").trim().split("\n").at(-1) ?? "";
  if (setup.status !== 0 || !last.startsWith("export ")) {
    process.stderr.write(`steward: infra/containers/setup.sh failed (exit ${setup.status})\n`);
    if (mode === "1") return { failed: true };
    return skip("skipped the container suite (test/containers): infra/containers/setup.sh failed, see above");
  }
  const env = exportsOf(last);
  Object.assign(process.env, env);
  return {
    jestArgs: [],
    env,
    afterwards: async () => {
      const removed = await sweeper.sweep().catch(() => 0);
      if (removed > 0) process.stderr.write(`steward: removed ${removed} containers/networks the container suite left behind\n`);
    },
  };
}

// What `npm start` leaves on record under <Steward home>/run, so that `npm run stop` (and the next
// `npm start`) can find it: launcher.json (the launcher), services.json (the live services), postgres.json
// and nats-server.json (servers Steward started because none answered).
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stewardHome } from "./paths.mjs";

export const runDir = join(stewardHome, "run");

/** Writes <home>/run/<name> as JSON (atomically: a reader never sees half a file). */
export function writeRunFile(name, data) {
  mkdirSync(runDir, { recursive: true });
  const file = join(runDir, name);
  writeFileSync(`${file}.tmp`, `${JSON.stringify(data, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
}

/** The parsed run file, or null when there is none (or it cannot be read). */
export function readRunFile(name) {
  try {
    return JSON.parse(readFileSync(join(runDir, name), "utf8"));
  } catch {
    return null;
  }
}

export function removeRunFile(name) {
  rmSync(join(runDir, name), { force: true });
}

/** The command line of a live process (Linux /proc), or null when there is no such process. */
export function commandLine(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
  } catch {
    return null;
  }
}

/**
 * True when `pid` is alive and still the process that was recorded: its command line contains `marker`
 * (a pid file can outlive its process, and the pid can be reused since).
 */
export function isRecordedProcess(pid, marker) {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  const cmd = commandLine(pid);
  return cmd !== null && cmd.includes(marker);
}

function gone(pid) {
  try {
    process.kill(pid, 0);
    // A zombie (exited, its parent has not reaped it yet) still answers; it holds nothing.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.charAt(stat.lastIndexOf(")") + 2) === "Z";
  } catch {
    return true;
  }
}

/** Waits (polling, bounded) until `pid` has exited; true if it did within `timeoutMs`. */
export async function waitGone(pid, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (!gone(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

/**
 * Stops a process that is not our child: SIGTERM, up to `graceMs` for it to exit, then SIGKILL (to its
 * process group as well when `group`). Resolves once it is gone (or after SIGKILL had 5 s).
 */
export async function stopProcess(pid, { graceMs = 10_000, group = false } = {}) {
  const send = (signal) => {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  };
  send("SIGTERM");
  if (await waitGone(pid, graceMs)) return "stopped";
  send("SIGKILL");
  if (group) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // no such group
    }
  }
  await waitGone(pid, 5000);
  return "killed";
}

/**
 * Stops the services recorded in run/services.json that still run (left by an `npm start` that was killed
 * without a chance to stop them), and forgets them. Resolves with how many it stopped.
 */
export async function stopRecordedServices(say) {
  const record = readRunFile("services.json");
  const live = Object.entries(record?.services ?? {}).filter(([name, s]) => isRecordedProcess(s?.pid, `services/${name}/dist/main.js`));
  for (const [name, s] of live) say(`stopping ${name} (pid ${s.pid}), left running by an npm start that is gone`);
  await Promise.all(live.map(([, s]) => stopProcess(s.pid, { group: true })));
  removeRunFile("services.json");
  return live.length;
}

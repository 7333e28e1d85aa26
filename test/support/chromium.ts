import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { waitFor } from "./wait-for";

/** Debian's Chromium (`apt-get install chromium`); the browser tests drive it with playwright-core. */
export const CHROMIUM = "/usr/bin/chromium";

/** One installer at a time across parallel suites: whoever makes this directory installs. */
const LOCK = join(tmpdir(), "steward-chromium-install.lock");
const INSTALL_TIMEOUT_MS = 15 * 60_000;

function apt(args: string[]): { ok: boolean; output: string } {
  const r = spawnSync("apt-get", args, { encoding: "utf8", timeout: INSTALL_TIMEOUT_MS, env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  return { ok: r.status === 0, output: `${r.stdout ?? ""}${r.stderr ?? ""}`.slice(-2000) };
}

function takeLock(): boolean {
  try {
    mkdirSync(LOCK);
    return true;
  } catch {
    // Held by another suite; one left by a crashed installer is stale after the install's own bound.
    try {
      if (Date.now() - statSync(LOCK).mtimeMs > INSTALL_TIMEOUT_MS) rmSync(LOCK, { recursive: true, force: true });
    } catch {
      // released meanwhile
    }
    return false;
  }
}

/**
 * The Chromium binary, installed with apt-get when missing and running as root (once, under a lock shared by
 * parallel suites). Anything else throws with what to do: the browser suite fails, it never skips.
 */
export async function ensureChromium(): Promise<string> {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  if (process.getuid?.() !== 0) {
    throw new Error(`the browser tests need Chromium at ${CHROMIUM}: run \`sudo apt-get install -y chromium\` (the setup installs it only as root)`);
  }
  await waitFor(
    () => {
      if (existsSync(CHROMIUM)) return true;
      if (!takeLock()) return undefined;
      try {
        let r = apt(["install", "-y", "chromium"]);
        if (!r.ok) {
          apt(["update"]);
          r = apt(["install", "-y", "chromium"]);
        }
        if (!r.ok || !existsSync(CHROMIUM)) throw new Error(`apt-get install -y chromium failed:\n${r.output}`);
        return true;
      } finally {
        rmSync(LOCK, { recursive: true, force: true });
      }
    },
    { timeoutMs: INSTALL_TIMEOUT_MS, intervalMs: 1000, what: "Chromium to be installed (apt-get install -y chromium)" },
  ).catch((err: Error) => {
    throw new Error(`the browser tests need Chromium at ${CHROMIUM} and it could not be installed: ${err.message}`);
  });
  return CHROMIUM;
}

/**
 * Launches headless Chromium for the tests: without background networking, component updates or sync (the
 * machine's network is closed). playwright-core gives each launch a fresh --user-data-dir and removes it on close.
 */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: await ensureChromium(),
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

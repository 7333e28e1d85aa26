import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, totalmem, release } from "node:os";

/** What the numbers were measured on. */
export interface Machine {
  readonly nproc: number;
  readonly cpuModel: string;
  readonly memoryGb: number;
  readonly freeH: string;
  readonly kernel: string;
  readonly node: string;
  readonly loadAverageAtStart: string;
}

function sh(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: "utf8", timeout: 5000 }).trim();
  } catch {
    return "unavailable";
  }
}

export function describeMachine(): Machine {
  return {
    nproc: Number(sh("nproc", [])) || cpus().length,
    cpuModel: cpus()[0]?.model ?? "unknown",
    memoryGb: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    freeH: sh("free", ["-h"]),
    kernel: release(),
    node: process.version,
    loadAverageAtStart: sh("cat", ["/proc/loadavg"]),
  };
}

function cpuTimes(): { idle: number; total: number } {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0] as string;
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const idle = v[3] + (v[4] ?? 0);
    return { idle, total: v.reduce((a, b) => a + b, 0) };
  } catch {
    return { idle: 0, total: 0 };
  }
}

/** Share of the machine's CPU time that was busy over the next `ms` (all processes; 0–1). */
export async function machineBusy(ms = 1000): Promise<number> {
  const a = cpuTimes();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const b = cpuTimes();
  const total = b.total - a.total;
  return total > 0 ? 1 - (b.idle - a.idle) / total : Number.NaN;
}

/**
 * Waits, at most `maxMs`, for half a second in which the machine is less than `below` busy: a window measured
 * right after another platform's must not inherit its after-work (PostgreSQL writing out and vacuuming its rows).
 */
export async function settle(maxMs = 5000, below = 0.25): Promise<void> {
  for (let waited = 0; waited < maxMs; waited += 500) if ((await machineBusy(500)) < below) return;
}

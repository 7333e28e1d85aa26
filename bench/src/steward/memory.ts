import { readFileSync } from "node:fs";
import { sleep } from "../stats";
import { createRun, type StewardBench } from "./context";

/** Resident set size of a process in MB (Linux /proc). */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

export interface MemoryResult {
  /** Right after the runner started. */
  readonly freshMb: number;
  /** Before the 100 runs, after the phases that ran on this runner before. */
  readonly idleMb: number;
  /** Highest RSS sampled while all `inFlight` runs were running. */
  readonly peakMb: number;
  /** Median RSS sampled while all of them were running. */
  readonly medianMb: number;
  /** Most runs seen running at once. */
  readonly maxRunning: number;
  readonly inFlight: number;
  readonly afterMb: number;
  /** Runs that had not ended 30 s after the sampling (the platform is stuck). */
  readonly stuck: number;
}

/**
 * Runner RSS with `count` runs in flight: each run's model takes `holdMs`–2×`holdMs` per answer (drawn per
 * run, so that the runs' tool calls spread out as they would with a real model), so that all of them are
 * claimed and running at once; RSS is sampled every 100 ms while they are.
 */
export async function measureMemory(bench: StewardBench, count: number, holdMs: number): Promise<MemoryResult> {
  const pid = bench.platform.services.runner.child.pid!;
  const idleMb = rssMb(pid);
  const runs = await Promise.all(Array.from({ length: count }, () => createRun(bench, 3, holdMs + Math.floor(Math.random() * holdMs))));
  const ids = runs.map((r) => r.id);
  const during: number[] = [];
  let maxRunning = 0;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { rows } = await bench.pool.query<{ running: number; open: number }>(
      `SELECT count(*) FILTER (WHERE state = 'running')::int AS running,
              count(*) FILTER (WHERE state IN ('queued', 'running'))::int AS open
         FROM runs WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    maxRunning = Math.max(maxRunning, rows[0].running);
    if (rows[0].running === count) during.push(rssMb(pid));
    if (rows[0].open === 0 || Date.now() > deadline) break;
    await sleep(100);
  }
  const ends = await Promise.allSettled(ids.map((id) => bench.watcher.ended(id, 30_000)));
  const stuck = ends.filter((e) => e.status === "rejected").length;
  const sorted = [...during].sort((a, b) => a - b);
  return {
    freshMb: bench.runnerStartRssMb,
    idleMb,
    peakMb: sorted[sorted.length - 1] ?? Number.NaN,
    medianMb: sorted[Math.floor(sorted.length / 2)] ?? Number.NaN,
    maxRunning,
    inFlight: count,
    afterMb: rssMb(pid),
    stuck,
  };
}

import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, renameSync, statSync } from "node:fs";
import { join } from "node:path";
import { sleep } from "../stats";
import { rssMb } from "../steward/memory";

export const services = ["runner", "toolExec", "policy", "gateway"] as const;
export type Service = (typeof services)[number];

/** One look at every service: RSS from /proc now, V8 heap from the preload's latest line (≤ its interval old). */
export interface Sample {
  /** Seconds since the load started. */
  readonly at: number;
  readonly runs: number;
  readonly failed: number;
  readonly label?: string;
  /** VmRSS, MB. */
  readonly rss: Record<Service, number>;
  /** V8 heap used / heap total, MB (NaN until the preload has written a line). */
  readonly heapUsed: Record<Service, number>;
  readonly heapTotal: Record<Service, number>;
  /** V8's heap size limit, MB: which heap flags each service really runs with. */
  readonly heapLimit: Record<Service, number>;
  /** /proc/loadavg's 1-minute figure: how busy the shared machine was. */
  readonly load1: number;
}

function lastLine(file: string): { heapUsed: number; heapTotal: number; heapLimit: number } | null {
  try {
    const text = readFileSync(file, "utf8").trimEnd();
    const line = text.slice(text.lastIndexOf("\n") + 1);
    return JSON.parse(line) as { heapUsed: number; heapTotal: number; heapLimit: number };
  } catch {
    return null;
  }
}

const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

/** Samples the services with these pids; `memDir` is where mem-preload writes. */
export function sampler(pids: Record<Service, number>, memDir: string) {
  return (at: number, runs: number, failed: number, label?: string): Sample => {
    const rss = {} as Record<Service, number>;
    const heapUsed = {} as Record<Service, number>;
    const heapTotal = {} as Record<Service, number>;
    const heapLimit = {} as Record<Service, number>;
    for (const s of services) {
      try {
        rss[s] = Math.round(rssMb(pids[s]) * 10) / 10;
      } catch {
        rss[s] = Number.NaN; // exited
      }
      const heap = lastLine(join(memDir, `${pids[s]}.jsonl`));
      heapUsed[s] = heap ? mb(heap.heapUsed) : Number.NaN;
      heapTotal[s] = heap ? mb(heap.heapTotal) : Number.NaN;
      heapLimit[s] = heap ? mb(heap.heapLimit) : Number.NaN;
    }
    const load1 = Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);
    return { at: Math.round(at * 10) / 10, runs, failed, label, rss, heapUsed, heapTotal, heapLimit, load1 };
  };
}

function endsJson(path: string, size: number): boolean {
  const fd = openSync(path, "r");
  try {
    const tail = Buffer.alloc(Math.min(16, size));
    readSync(fd, tail, 0, tail.length, size - tail.length);
    return tail.toString("utf8").trimEnd().endsWith("}");
  } finally {
    closeSync(fd);
  }
}

/**
 * Asks a process started with `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=<dir>` for a heap snapshot
 * (V8 collects garbage first, so it holds only what is retained) and renames the file to `<name>`.
 * Resolves once the file has stopped growing; bounded.
 */
export async function takeHeapSnapshot(pid: number, dir: string, name: string, timeoutMs = 180_000): Promise<string | null> {
  const before = new Set(existsSync(dir) ? readdirSync(dir) : []);
  process.kill(pid, "SIGUSR2");
  const deadline = Date.now() + timeoutMs;
  let file: string | undefined;
  let size = -1;
  let stableFor = 0;
  while (Date.now() < deadline) {
    await sleep(500);
    file ??= readdirSync(dir).find((f) => f.endsWith(".heapsnapshot") && f.includes(`.${pid}.`) && !before.has(f));
    if (!file) continue;
    const now = statSync(join(dir, file)).size;
    stableFor = now === size && now > 0 ? stableFor + 500 : 0;
    size = now;
    // The writer streams the file in chunks; it has finished when it stopped growing and the JSON is closed.
    if (stableFor >= 1000 && endsJson(join(dir, file), now)) {
      const target = join(dir, name);
      renameSync(join(dir, file), target);
      return target;
    }
  }
  return null;
}

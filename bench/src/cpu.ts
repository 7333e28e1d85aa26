import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/**
 * CPU time by process, from /proc: what each part of the system spends on a measured window. On a 2-core
 * machine the throughput ceiling is 2 000 ms of CPU per second divided by the CPU one iteration costs, so
 * this is where the time goes.
 */
let ticksPerSecond: number | null = null;
function clkTck(): number {
  if (ticksPerSecond === null) {
    try {
      ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

interface ProcStat {
  comm: string;
  ppid: number;
  /** utime + stime, ms. */
  own: number;
  /** cutime + cstime (children already reaped), ms. */
  reaped: number;
}

function stat(pid: number): ProcStat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const close = text.lastIndexOf(")");
    const comm = text.slice(text.indexOf("(") + 1, close);
    const f = text.slice(close + 2).split(" ");
    // f[0] is field 3 (state): utime is field 14 → f[11], stime f[12], cutime f[13], cstime f[14].
    const ms = (ticks: string) => (Number(ticks) * 1000) / clkTck();
    return { comm, ppid: Number(f[1]), own: ms(f[11]) + ms(f[12]), reaped: ms(f[13]) + ms(f[14]) };
  } catch {
    return null;
  }
}

/** What a meter counts besides the named processes. */
export interface SharedProcesses {
  /**
   * nats-server's CPU (default true). A platform that does not use NATS (the LangGraph.js peer) leaves it out: what
   * nats-server does meanwhile is another platform's (Steward's, idle beside it) or the machine's.
   */
  readonly nats?: boolean;
}

/**
 * CPU ms so far of the named processes, plus every PostgreSQL process (and the backends it reaped) and, unless
 * `shared.nats` is false, nats-server.
 */
export function cpuNow(pids: Record<string, number>, shared: SharedProcesses = {}): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, pid] of Object.entries(pids)) {
    const s = stat(pid);
    if (s) out[name] = s.own;
  }
  let postgres = 0;
  let nats = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const s = stat(Number(entry));
    if (!s) continue;
    if (s.comm === "postgres") postgres += s.own + (s.ppid === 1 || stat(s.ppid)?.comm !== "postgres" ? s.reaped : 0);
    else if (s.comm === "nats-server") nats += s.own;
  }
  out.postgres = postgres;
  if (shared.nats !== false) out["nats-server"] = nats;
  return out;
}

export interface CpuMeter {
  /** CPU ms each part spent since the meter was made. */
  stop(): Record<string, number>;
}

export function cpuMeter(pids: Record<string, number>, shared: SharedProcesses = {}): CpuMeter {
  const before = cpuNow(pids, shared);
  return {
    stop() {
      const after = cpuNow(pids, shared);
      const out: Record<string, number> = {};
      for (const [k, v] of Object.entries(after)) out[k] = Math.max(0, v - (before[k] ?? 0));
      return out;
    },
  };
}

/** Adds each part's CPU ms of one window into `total` (windows measured apart, counted together). */
export function addCpu(total: Record<string, number>, part: Record<string, number>): Record<string, number> {
  for (const [k, v] of Object.entries(part)) total[k] = (total[k] ?? 0) + v;
  return total;
}

/** Divides every entry by `n` (e.g. CPU ms per iteration) and adds the total. */
export function perUnit(cpu: Record<string, number>, n: number): Record<string, number> {
  const out: Record<string, number> = {};
  let total = 0;
  for (const [k, v] of Object.entries(cpu)) {
    out[k] = n > 0 ? v / n : Number.NaN;
    total += v;
  }
  out.total = n > 0 ? total / n : Number.NaN;
  return out;
}

/** Every process's own CPU ms by pid (for telling our load from the machine's other work). */
function allProcesses(): Map<number, { comm: string; own: number }> {
  const out = new Map<number, { comm: string; own: number }>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const s = stat(Number(entry));
    if (s) out.set(Number(entry), { comm: s.comm, own: s.own });
  }
  return out;
}

/**
 * Share of the machine (0–1 of all cores) that processes other than ours, PostgreSQL and nats-server used
 * over the next `ms`: other people's builds and tests on a shared machine.
 */
export async function othersBusy(ms: number, ours: ReadonlySet<number>, cores: number): Promise<number> {
  const a = allProcesses();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const b = allProcesses();
  let used = 0;
  for (const [pid, p] of b) {
    if (ours.has(pid) || p.comm === "postgres" || p.comm === "nats-server") continue;
    used += p.own - (a.get(pid)?.own ?? 0);
  }
  return used / (ms * cores);
}

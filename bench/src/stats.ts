/** Summary statistics over latency samples (ms) and over repeated measurements. */

export interface Summary {
  readonly n: number;
  readonly p50: number;
  readonly p99: number;
  readonly mean: number;
  readonly min: number;
  readonly max: number;
}

/** Nearest-rank percentile of an ascending array; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sorted.length ? sum / sorted.length : Number.NaN,
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

export function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

/** A value measured several times: the median is reported, the spread is kept. */
export interface Repeated {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly values: readonly number[];
}

export function repeated(values: readonly number[]): Repeated {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values), values: [...values] };
}

/** Where the monotonic clock's zero lies on the system clock, in ms since the epoch. */
let anchor = performance.timeOrigin;

/** The system clock at its next millisecond tick, less the monotonic clock then: an anchor to within microseconds. */
function anchorAtTick(): number {
  const start = Date.now();
  let wall = start;
  while (wall === start) wall = Date.now();
  return wall - performance.now();
}

/**
 * Wall clock in ms with sub-ms resolution, comparable with PostgreSQL's clock_timestamp() on this machine. The
 * monotonic clock gives the resolution; the system clock, which PostgreSQL reads, decides where it lies. When
 * the two part by more than Date.now()'s own millisecond (the system clock was adjusted while the bench ran:
 * seen once, about 0.6 s over a full run, which made every bench time against a stored one wrong by that much),
 * the anchor is taken again.
 */
export function wallMs(): number {
  const now = performance.now();
  if (Math.abs(anchor + now - Date.now()) > 1.5) {
    anchor = anchorAtTick();
    return anchor + performance.now();
  }
  return anchor + now;
}

/** An ISO timestamp with microseconds (as the store returns them) in ms since the epoch. */
export function isoToMs(iso: string): number {
  const m = /^(.*T\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?Z$/.exec(iso);
  if (!m) throw new RangeError(`not an ISO UTC timestamp: ${iso}`);
  return Date.parse(`${m[1]}Z`) + Number((m[2] ?? "").padEnd(6, "0")) / 1000;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** How many exchanges `afterIdle` times, and the pause before each, ms. */
export interface IdlePause {
  readonly samples: number;
  readonly ms: number;
}

/** The clock and the timer `afterIdle` uses: the process's own unless a spec gives its own. */
export interface PauseClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const processClock: PauseClock = { now: () => performance.now(), sleep };

/**
 * `idle.samples` exchanges one at a time, each started `idle.ms` after the one before it ended (a timer, not a busy
 * wait), so that the processes on both ends have gone idle, as they do between the steps of a run driven one at a
 * time; each sample times `op` alone.
 */
export async function afterIdle(idle: IdlePause, op: () => Promise<unknown>, clock: PauseClock = processClock): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < idle.samples; i++) {
    await clock.sleep(idle.ms);
    const t0 = clock.now();
    await op();
    out.push(clock.now() - t0);
  }
  return out;
}

/** Runs `worker` on `concurrency` parallel loops until `durationMs` has passed; each loop finishes its last call. */
export async function closedLoop(concurrency: number, durationMs: number, worker: (slot: number) => Promise<void>): Promise<number> {
  const start = performance.now();
  const until = start + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, slot) => {
      while (performance.now() < until) await worker(slot);
    }),
  );
  return performance.now() - start;
}

/** Like closedLoop, but a worker may end its loop early by resolving false. */
export async function closedLoopUntil(concurrency: number, durationMs: number, worker: (slot: number) => Promise<boolean>): Promise<number> {
  const start = performance.now();
  const until = start + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, slot) => {
      while (performance.now() < until) if (!(await worker(slot))) return;
    }),
  );
  return performance.now() - start;
}

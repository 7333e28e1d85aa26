import { parseArgs } from "node:util";

/** How long and how often each measurement runs; `--quick` is the smoke version (< 2 min). */
export interface BenchOptions {
  readonly quick: boolean;
  /** Services and the peer run with --cpu-prof; profiles and a summary land in results/profiles/<stamp>/. */
  readonly profile: boolean;
  /** Keep the services' logs in results/logs/<stamp>/ (default; `--no-logs` turns it off). */
  readonly logs: boolean;
  /** A throughput run that has not ended after this long means the platform is stuck, ms. */
  readonly runTimeoutMs: number;
  /** Phases to run (default all): floors, steward, path, memory, replay, policy, takeover, peer, gateway. */
  readonly only: ReadonlySet<string> | null;
  /** Repeats of each throughput/rate measurement after the warm-up. */
  readonly repeats: number;
  /**
   * Windows of each platform at 8 concurrent when Steward's and LangGraph.js's alternate: more than `repeats`, since
   * on this host one window can differ from the next by a third, and the must is the median of the pairs.
   */
  readonly pairs: number;
  /** Length of one throughput/rate window, ms. */
  readonly windowMs: number;
  /** Samples of a sequential latency floor (PG, JetStream, gRPC). */
  readonly floorSamples: number;
  /** Samples of each floor taken after an idle pause, and that pause, ms (`afterIdle` in stats.ts). */
  readonly idleSamples: number;
  readonly idleMs: number;
  /** Runs measured one at a time for the per-iteration latency. */
  readonly serialRuns: number;
  /**
   * Unmeasured runs before them, Steward's and LangGraph.js's alike: enough iterations for V8 to have optimized the
   * hot code (two runs, 20 iterations, left the first measured runs about 15 % slower than the ones after them).
   */
  readonly serialWarmupRuns: number;
  /** Bursts of one tenant's runs POSTed at once, in the path phase. */
  readonly bursts: number;
  /** POST → started samples. */
  readonly pathSamples: number;
  /** autocannon duration per repeat, s. */
  readonly cannonSeconds: number;
  readonly restoreSamples: number;
  /** Rounds of the takeover phase (a runner killed with its runs in flight each). */
  readonly takeoverRounds: number;
}

export const phases = ["floors", "steward", "path", "memory", "replay", "policy", "takeover", "peer", "gateway"] as const;

export function readOptions(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: "boolean", default: false },
      profile: { type: "boolean", default: false },
      "no-logs": { type: "boolean", default: false },
      only: { type: "string" },
    },
  });
  const only = values.only ? new Set(values.only.split(",").map((s) => s.trim())) : null;
  for (const p of only ?? []) if (!(phases as readonly string[]).includes(p)) throw new Error(`--only: unknown phase ${p} (${phases.join(", ")})`);
  const quick = values.quick ?? false;
  return {
    quick,
    profile: values.profile ?? false,
    logs: !(values["no-logs"] ?? false),
    runTimeoutMs: 30_000,
    only,
    repeats: quick ? 1 : 3,
    pairs: quick ? 1 : 5,
    windowMs: quick ? 3000 : 10_000,
    floorSamples: quick ? 300 : 2000,
    idleSamples: quick ? 100 : 400,
    idleMs: 10,
    serialRuns: quick ? 3 : 10,
    serialWarmupRuns: quick ? 2 : 20,
    pathSamples: quick ? 30 : 150,
    bursts: quick ? 3 : 10,
    cannonSeconds: quick ? 3 : 8,
    restoreSamples: quick ? 50 : 300,
    takeoverRounds: quick ? 1 : 3,
  };
}

export function wants(options: BenchOptions, phase: (typeof phases)[number]): boolean {
  return options.only === null || options.only.has(phase);
}

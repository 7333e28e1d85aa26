import { parseArgs } from "node:util";

/** What `npm run soak` does; every field has a default, so `npm run soak` alone is the 20 000-run soak. */
export interface SoakOptions {
  /** Runs to drive to the end. Default 20 000. */
  readonly runs: number;
  /** Closed-loop clients, each creating a one-tool run and waiting for its end. Default 16. */
  readonly clients: number;
  /** Completed runs at which the reference sample is taken. Default 1 000. */
  readonly baselineRuns: number;
  /** A sample every this many completed runs. Default 1 000. */
  readonly sampleEveryRuns: number;
  /** And one every this many seconds. Default 10. */
  readonly sampleEverySeconds: number;
  /** The soak stops starting runs after this long, whatever the count. Default 40 min. */
  readonly maxMinutes: number;
  /** A run not ended after this long counts as failed. Default 120 s (a heap snapshot freezes the runner). */
  readonly runTimeoutMs: number;
  /** Seconds of idle after the load, then one more sample. Default 30. */
  readonly idleSeconds: number;
  /** Completed-run counts at which the runner writes a heap snapshot (results/soak-<stamp>/). Default none. */
  readonly snapshotAt: readonly number[];
  /** Added to every service's NODE_OPTIONS. Default none. */
  readonly nodeOptions: string;
  /** Added to the runner's NODE_OPTIONS only (heap sizing, e.g. "--max-old-space-size=256"). Default none. */
  readonly runnerNodeOptions: string;
  /** Allowed growth of RSS from the reference sample to the end: 0.2 = 20 %. */
  readonly tolerance: number;
  readonly logs: boolean;
}

function int(value: string | undefined, name: string, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name}: expected an integer ≥ ${min}, got ${value}`);
  return n;
}

export function readSoakOptions(argv: string[]): SoakOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      runs: { type: "string" },
      clients: { type: "string" },
      baseline: { type: "string" },
      "sample-every": { type: "string" },
      "sample-seconds": { type: "string" },
      "max-minutes": { type: "string" },
      "run-timeout-s": { type: "string" },
      "idle-seconds": { type: "string" },
      "snapshot-at": { type: "string" },
      "node-options": { type: "string" },
      "runner-node-options": { type: "string" },
      "no-logs": { type: "boolean", default: false },
    },
  });
  const runs = int(values.runs, "runs", 20_000);
  const baselineRuns = int(values.baseline, "baseline", Math.min(1000, runs));
  if (baselineRuns > runs) throw new Error(`--baseline (${baselineRuns}) must not exceed --runs (${runs})`);
  const snapshotAt = (values["snapshot-at"] ?? "")
    .split(",")
    .filter((s) => s.trim())
    .map((s) => int(s.trim(), "snapshot-at", 0));
  return {
    runs,
    clients: int(values.clients, "clients", 16),
    baselineRuns,
    sampleEveryRuns: int(values["sample-every"], "sample-every", 1000),
    sampleEverySeconds: int(values["sample-seconds"], "sample-seconds", 10),
    maxMinutes: int(values["max-minutes"], "max-minutes", 40),
    runTimeoutMs: int(values["run-timeout-s"], "run-timeout-s", 120) * 1000,
    idleSeconds: int(values["idle-seconds"], "idle-seconds", 30, 0),
    snapshotAt,
    nodeOptions: values["node-options"] ?? "",
    runnerNodeOptions: values["runner-node-options"] ?? "",
    tolerance: 0.2,
    logs: !(values["no-logs"] ?? false),
  };
}

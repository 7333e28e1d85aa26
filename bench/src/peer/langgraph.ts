import { join } from "node:path";
import { spawnNode } from "../child";
import type { PgActivity } from "../pg-activity";
import { repeated, summarize, type Repeated, type Summary } from "../stats";

export interface PeerResult {
  readonly durability: "sync" | "async";
  readonly iteration: Summary;
  readonly wallPerIteration: Summary;
  readonly iterationsPerSecond: Repeated;
  readonly iterationUnderLoad: Summary;
  readonly concurrency: number;
  readonly versions: Record<string, string>;
  /** CPU ms per iteration by process under the concurrent load. */
  readonly cpuPerIteration: Record<string, number>;
  readonly pgPerIteration: PgActivity;
}

/** Runs the LangGraph.js peer in its own process and collects its one result line. */
export async function measureLangGraph(options: {
  databaseUrl: string;
  modelUrl: string;
  durability: "sync" | "async";
  serialRuns: number;
  serialWarmupRuns: number;
  concurrency: number;
  windowMs: number;
  repeats: number;
  profileDir?: string;
}): Promise<PeerResult> {
  const args = {
    databaseUrl: options.databaseUrl,
    modelUrl: options.modelUrl,
    durability: options.durability,
    serialRuns: options.serialRuns,
    serialWarmupRuns: options.serialWarmupRuns,
    concurrency: options.concurrency,
    windowMs: options.windowMs,
    repeats: options.repeats,
    iterations: 10,
  };
  const nodeArgs = options.profileDir ? ["--cpu-prof", `--cpu-prof-dir=${options.profileDir}`] : [];
  const peer = await spawnNode(join(__dirname, "langgraph-peer.js"), [JSON.stringify(args)], {
    readyMsg: "result",
    timeoutMs: 60_000 + options.repeats * options.windowMs * 3 + (options.serialRuns + options.serialWarmupRuns) * 10_000,
    nodeArgs,
  });
  await new Promise<void>((resolve) => (peer.child.exitCode !== null ? resolve() : peer.child.once("exit", () => resolve())));
  const r = peer.ready as unknown as {
    serialIntervals: number[];
    serialWall: number[];
    loadIntervals: number[];
    rates: number[];
    cpuPerIteration: Record<string, number>;
    pgPerIteration: PgActivity;
    versions: Record<string, string>;
  };
  return {
    durability: options.durability,
    iteration: summarize(r.serialIntervals),
    wallPerIteration: summarize(r.serialWall),
    iterationsPerSecond: repeated(r.rates),
    iterationUnderLoad: summarize(r.loadIntervals),
    concurrency: options.concurrency,
    versions: r.versions,
    cpuPerIteration: r.cpuPerIteration,
    pgPerIteration: r.pgPerIteration,
  };
}

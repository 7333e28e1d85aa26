import { join } from "node:path";
import { spawnNode } from "../child";
import { childAnswers } from "./child-answers";
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

export interface PeerOptions {
  databaseUrl: string;
  modelUrl: string;
  durability: "sync" | "async";
  serialRuns: number;
  serialWarmupRuns: number;
  concurrency: number;
  windowMs: number;
  profileDir?: string;
}

/** A started peer, warm: it measures a window when asked, and reports everything at the end. */
export interface LangGraphPeer {
  /** A window's length of runs at the peer's concurrency, unmeasured. */
  warmUp(): Promise<void>;
  /** One closed-loop window at the peer's concurrency; resolves with its iterations/s. */
  window(): Promise<number>;
  /** Ends the peer and returns what it measured: its serial runs and every window. */
  finish(): Promise<PeerResult>;
  /** Kills it (a phase that failed). */
  stop(): Promise<void>;
}

/** Starts the LangGraph.js peer in its own process; resolves once its serial runs are done and it is warm. */
export async function startLangGraph(options: PeerOptions): Promise<LangGraphPeer> {
  const args = {
    databaseUrl: options.databaseUrl,
    modelUrl: options.modelUrl,
    durability: options.durability,
    serialRuns: options.serialRuns,
    serialWarmupRuns: options.serialWarmupRuns,
    concurrency: options.concurrency,
    windowMs: options.windowMs,
    iterations: 10,
  };
  const nodeArgs = options.profileDir ? ["--cpu-prof", `--cpu-prof-dir=${options.profileDir}`] : [];
  const peer = await spawnNode(join(__dirname, "langgraph-peer.js"), [JSON.stringify(args)], {
    readyMsg: "warm",
    timeoutMs: 60_000 + (options.serialRuns + options.serialWarmupRuns) * 10_000,
    nodeArgs,
    stdin: true,
  });
  const next = childAnswers(peer.child, "the LangGraph.js peer");
  // A window waits for the runs it started, and a stuck one is a failure, not a slow window.
  const windowTimeoutMs = options.windowMs + 60_000;
  return {
    async warmUp() {
      peer.child.stdin!.write("warm-up\n");
      await next("warmed", windowTimeoutMs);
    },
    async window() {
      peer.child.stdin!.write("window\n");
      return Number((await next("window", windowTimeoutMs)).rate);
    },
    async finish() {
      peer.child.stdin!.end("end\n");
      const r = (await next("result", 60_000)) as unknown as {
        serialIntervals: number[];
        serialWall: number[];
        loadIntervals: number[];
        rates: number[];
        cpuPerIteration: Record<string, number>;
        pgPerIteration: PgActivity;
        versions: Record<string, string>;
      };
      await new Promise<void>((resolve) => (peer.child.exitCode !== null ? resolve() : peer.child.once("exit", () => resolve())));
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
    },
    stop: () => peer.stop(),
  };
}

/** The peer on its own: its serial runs, a window unmeasured, then `repeats` windows one after another. */
export async function measureLangGraph(options: PeerOptions & { repeats: number }): Promise<PeerResult> {
  const peer = await startLangGraph(options);
  try {
    await peer.warmUp();
    for (let r = 0; r < options.repeats; r++) await peer.window();
    return await peer.finish();
  } catch (err) {
    await peer.stop();
    throw err;
  }
}

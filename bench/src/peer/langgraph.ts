import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
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

/** The peer's one-line answers after it is warm, each awaited in turn; its exit fails the one awaited. */
function answers(child: ChildProcess) {
  const queued: Array<Record<string, unknown>> = [];
  let waiting: { msg: string; resolve: (m: Record<string, unknown>) => void; reject: (e: Error) => void } | null = null;
  let stderr = "";
  let gone: Error | null = null;
  child.stderr!.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString("utf8")).slice(-2000)));
  const deliver = () => {
    if (!waiting) return;
    const at = queued.findIndex((m) => m.msg === waiting!.msg);
    if (at >= 0) {
      const w = waiting;
      waiting = null;
      w.resolve(queued.splice(at, 1)[0]);
    } else if (gone) {
      const w = waiting;
      waiting = null;
      w.reject(gone);
    }
  };
  createInterface({ input: child.stdout! }).on("line", (line) => {
    try {
      queued.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      return; // not a message
    }
    deliver();
  });
  // "close", not "exit": by then every line it wrote has been read.
  child.once("close", (code, signal) => {
    gone = new Error(`the LangGraph.js peer exited (code ${code}, signal ${signal})\nstderr: ${stderr}`);
    deliver();
  });
  return (msg: string, timeoutMs: number) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(() => {
        waiting = null;
        reject(new Error(`the LangGraph.js peer sent no ${msg} within ${timeoutMs} ms\nstderr: ${stderr}`));
      }, timeoutMs);
      waiting = {
        msg,
        resolve: (m) => (clearTimeout(timer), resolve(m)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      };
      deliver();
    });
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
    timeoutMs: 60_000 + options.windowMs * 3 + (options.serialRuns + options.serialWarmupRuns) * 10_000,
    nodeArgs,
    stdin: true,
  });
  const next = answers(peer.child);
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

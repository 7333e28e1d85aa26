import { join } from "node:path";
import { foldRun, type StoredRunEvent } from "@steward/contract";
import { readAll, readStream } from "@steward/store";
import { repoRoot } from "../paths";
import { summarize, type Summary } from "../stats";
import { runToEnd, type StewardBench } from "./context";

export interface ReplayResult {
  readonly events: number;
  /** What the runner does before it continues a run: read the stream, fold it. */
  readonly restore: Summary;
  /** The fold alone, in memory. */
  readonly foldOnly: Summary;
  /** `npm run replay`'s check of the run (re-driving the decider over the recording), in memory. */
  readonly replayCheck: Summary | null;
  /** Events/s of foldRun over `foldEvents` events (streams folded one after the other). */
  readonly foldRate: number;
  /** Events/s of reading `foldEvents` events from the store (readAll pages of 10 000) and folding them. */
  readonly readAndFoldRate: number;
  readonly foldEvents: number;
  /** Of which really stored (the rest are the stored streams folded again). */
  readonly storedEvents: number;
}

type ReplayRun = (events: readonly StoredRunEvent[]) => { sameFinalState: boolean };

function loadReplayRun(): ReplayRun | null {
  try {
    // The replay command's core, from the built runner (not a package export; measured as the CLI runs it).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return (require(join(repoRoot, "services", "agent-runner", "dist", "app", "replay-run.js")) as { replayRun: ReplayRun }).replayRun;
  } catch {
    return null;
  }
}

function time(n: number, work: () => unknown): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    work();
    out.push(performance.now() - t0);
  }
  return out;
}

/**
 * Restore of a 25-step run (24 tool iterations and the final answer: 76 events), and the fold rate over
 * `foldEvents` events read from the store.
 */
export async function measureReplay(bench: StewardBench, samples: number, foldEvents = 100_000): Promise<ReplayResult> {
  const run = await runToEnd(bench, 24);
  const events = await readStream(bench.pool, run.id);
  const state = foldRun(events);
  if (state.status !== "succeeded" || state.step_no !== 25) throw new Error(`the 25-step run ended ${state.status} at step ${state.step_no}`);
  for (let i = 0; i < 20; i++) foldRun(await readStream(bench.pool, run.id)); // warm-up
  const restore: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    foldRun(await readStream(bench.pool, run.id));
    restore.push(performance.now() - t0);
  }
  const foldOnly = time(Math.max(samples, 1000), () => foldRun(events));
  const replayRun = loadReplayRun();
  const replayCheck = replayRun ? time(samples, () => replayRun(events)) : null;

  // Read up to foldEvents events in global order, then fold each stream.
  const t0 = performance.now();
  const stored: StoredRunEvent[] = [];
  let after = 0;
  while (stored.length < foldEvents) {
    const page = await readAll(bench.pool, { after, limit: Math.min(10_000, foldEvents - stored.length) });
    if (page.length === 0) break;
    for (const p of page) stored.push(p.event);
    after = page[page.length - 1].position;
  }
  const streams = groupByStream(stored);
  for (const s of streams) foldRun(s);
  const readAndFoldRate = (stored.length / (performance.now() - t0)) * 1000;

  // Fold rate over foldEvents events: the stored streams, folded again as often as needed to reach the count.
  const f0 = performance.now();
  let folded = 0;
  while (folded < foldEvents) {
    for (const s of streams) {
      foldRun(s);
      folded += s.length;
      if (folded >= foldEvents) break;
    }
    if (streams.length === 0) break;
  }
  const foldRate = (folded / (performance.now() - f0)) * 1000;
  return {
    events: events.length,
    restore: summarize(restore),
    foldOnly: summarize(foldOnly),
    replayCheck: replayCheck ? summarize(replayCheck) : null,
    foldRate,
    readAndFoldRate,
    foldEvents: folded,
    storedEvents: stored.length,
  };
}

function groupByStream(events: StoredRunEvent[]): StoredRunEvent[][] {
  const by = new Map<string, StoredRunEvent[]>();
  for (const e of events) {
    const list = by.get(e.metadata.run_id);
    if (list) list.push(e);
    else by.set(e.metadata.run_id, [e]);
  }
  // A stream cut by the page limit may start mid-run; fold only streams that start with run.queued.
  return [...by.values()].filter((s) => s[0].type === "run.queued");
}

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "../support/wait-for";
import { progress, startedBy, submitRuns } from "./support/load";
import { startTopology, type Topology } from "./support/topology";

// Scale-out evidence, not a test (`npm run bench:containers`; jest runs it only when asked): the same load
// with 1, 2 and 4 agent-runner containers on the full topology (three NATS nodes, streams ×3). Each runner is
// capped at RUNNER_CONCURRENCY runs at a time, as a deployment sizes it, so that adding runners adds
// capacity until the machine's cores are the limit. Prints a table and writes bench/results/containers-*.json.

jest.setTimeout(1_800_000);

const RUNS = Number(process.env.SCALE_RUNS ?? 96);
const CONCURRENCY = Number(process.env.SCALE_RUNNER_CONCURRENCY ?? 8);
const LOADS = [
  { name: "model-bound (200 ms before each note)", delayMs: 200 },
  { name: "CPU-bound (the model answers at once)", delayMs: 0 },
];

interface Row {
  load: string;
  runners: number;
  runs: number;
  seconds: number;
  runsPerSecond: number;
  stepsPerSecond: number;
  startedBy: Record<string, number>;
}

const rows: Row[] = [];

async function measure(t: Topology, load: (typeof LOADS)[number], runners: number): Promise<Row> {
  // A warm-up run per runner, so that connections and JIT are not in the numbers.
  const warm = await submitRuns(t, `warm-${load.delayMs}`, runners * 2, 0);
  await waitFor(async () => ((await progress(t, warm)).terminal === warm.length ? true : undefined), { timeoutMs: 120_000, intervalMs: 200 });
  const began = Date.now();
  const ids = await submitRuns(t, `scale-${load.delayMs}`, RUNS, load.delayMs);
  await waitFor(async () => ((await progress(t, ids)).terminal === RUNS ? true : undefined), { timeoutMs: 600_000, intervalMs: 100, what: "the load to end" });
  const seconds = (Date.now() - began) / 1000;
  const { rows: states } = await t.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE id = ANY($1::uuid[]) AND state = 'succeeded'", [ids]);
  if (states[0].n !== RUNS) throw new Error(`${RUNS - states[0].n} runs did not succeed`);
  // A step is one model answer: toolSteps tool calls and the final answer.
  return {
    load: load.name,
    runners,
    runs: RUNS,
    seconds,
    runsPerSecond: RUNS / seconds,
    stepsPerSecond: (RUNS * (t.toolSteps + 1)) / seconds,
    startedBy: await startedBy(t, ids),
  };
}

describe("scale-out: the same load on 1, 2 and 4 runner containers", () => {
  afterAll(() => {
    const lines = [
      "| load | runners | runs/s | steps/s | runs started per runner |",
      "| --- | --- | --- | --- | --- |",
      ...rows.map(
        (r) => `| ${r.load} | ${r.runners} | ${r.runsPerSecond.toFixed(2)} | ${r.stepsPerSecond.toFixed(1)} | ${Object.values(r.startedBy).join(" / ")} |`,
      ),
    ];
    console.info(`${RUNS} runs of 4 steps, RUNNER_CONCURRENCY=${CONCURRENCY}\n${lines.join("\n")}`);
    const dir = join(__dirname, "..", "..", "bench", "results");
    mkdirSync(dir, { recursive: true });
    const stamp = new Date().toISOString().replace(/[:.]/g, "-").slice(0, 19);
    writeFileSync(join(dir, `containers-${stamp}.json`), `${JSON.stringify({ runs: RUNS, runnerConcurrency: CONCURRENCY, rows }, null, 2)}\n`);
  });

  for (const runners of [1, 2, 4]) {
    it(`${runners} runner${runners > 1 ? "s" : ""}`, async () => {
      const t = await startTopology({ runners, env: { RUNNER_CONCURRENCY: String(CONCURRENCY) } });
      try {
        for (const load of LOADS) rows.push(await measure(t, load, runners));
      } finally {
        await t.teardown();
      }
    });
  }
});

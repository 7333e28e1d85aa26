import { speedMusts } from "./speed-musts";
import type { Results } from "./report";

/** The parts of a run's results the musts read; the rest of each phase's result is left out. */
function run(x: {
  floor: number;
  iteration: number;
  ours: number;
  theirs: number;
  ourCpu: number;
  theirCpu: number;
  post: number;
  pg: number;
  p99: number;
  started: number;
  restore: number;
  peakMb: number;
  crashes?: Results["crashes"];
}): Results {
  return {
    floors: { stepFloorMs: x.floor, pg: { rate: { 64: { median: x.pg } } } },
    steward: {
      serial: { iteration: { p50: x.iteration } },
      throughput: { 8: { iterationsPerSecond: { median: x.ours }, cpuPerIteration: { total: x.ourCpu } } },
    },
    peer: { async: { concurrency: 8, iterationsPerSecond: { median: x.theirs }, cpuPerIteration: { total: x.theirCpu } } },
    gateway: { connections: 64, post: { requestsPerSecond: { median: x.post }, p99: { median: x.p99 } } },
    path: { postToStarted: { p50: x.started } },
    replay: { restore: { p50: x.restore } },
    memory: { peakMb: x.peakMb, maxRunning: 100, inFlight: 100 },
    crashes: x.crashes ?? [],
    errors: {},
    busyBefore: {},
    othersBefore: {},
  } as unknown as Results;
}

const passing = {
  floor: 2,
  iteration: 8,
  ours: 240,
  theirs: 200,
  ourCpu: 7,
  theirCpu: 8,
  post: 1000,
  pg: 4000,
  p99: 49,
  started: 4.9,
  restore: 1,
  peakMb: 120,
};
const met = (r: Results) => Object.fromEntries(speedMusts(r).map((t) => [t.target, t.met]));

describe("the speed musts, judged from one run's results", () => {
  it("given a run that meets every must, throughput at exactly 1.2×, then every must is met", () => {
    expect(Object.values(met(run(passing)))).toEqual([true, true, true, true, true, true, true]);
  });

  it("given a run just past each edge, then exactly that must is missed", () => {
    const cases: Array<[Partial<typeof passing>, string]> = [
      [{ iteration: 8.01 }, "iteration ≤ 4× the step floor"],
      [{ ours: 239 }, "throughput at 8 concurrent ≥ 1.2× LangGraph.js (its default durability)"],
      [{ ourCpu: 8.01 }, "CPU per iteration at 8 concurrent ≤ LangGraph.js's"],
      [{ post: 999 }, "POST ≥ 25 % of raw PostgreSQL's rate at 64 connections, p99 < 50 ms"],
      [{ p99: 50 }, "POST ≥ 25 % of raw PostgreSQL's rate at 64 connections, p99 < 50 ms"],
      [{ started: 5 }, "POST → started p50 < 5 ms"],
      [{ restore: 5 }, "restore < 5 ms and runner RSS < 200 MB with 100 runs in flight, still"],
      [{ peakMb: 200 }, "restore < 5 ms and runner RSS < 200 MB with 100 runs in flight, still"],
    ];
    for (const [change, target] of cases) {
      const verdicts = met(run({ ...passing, ...change }));
      expect(Object.entries(verdicts).filter(([, v]) => v !== true)).toEqual([[target, false]]);
    }
  });

  it("given windows alternated with LangGraph.js's, then throughput is judged by the median of the pairs' ratios, not by the ratio of the medians", () => {
    const alternated = (ours: number[], theirs: number[]) => {
      const r = run(passing);
      Object.assign(r.steward!.throughput[8], { alternated: true, iterationsPerSecond: { median: [...ours].sort((a, b) => a - b)[1], values: ours } });
      Object.assign(r.peer!.async!, { iterationsPerSecond: { median: [...theirs].sort((a, b) => a - b)[1], values: theirs } });
      return speedMusts(r).find((t) => t.target.startsWith("throughput"))!;
    };
    // Medians 240 and 200 (1.20×), but the host moved between pairs: each pair alone is 1.25, 1.08 and 1.14.
    const drifted = alternated([250, 130, 240], [200, 120, 210]);
    expect(drifted.met).toBe(false);
    expect(drifted.measured).toBe("240 vs 200 it/s; windows alternated, Steward/LG by pair 1.25, 1.08, 1.14: median 1.14×");
    expect(alternated([250, 130, 252], [200, 100, 210]).met).toBe(true); // pairs 1.25, 1.30, 1.20
  });

  it("given the design's skeleton measured with the floors, then the iteration's verdict names its ratio to the floor as context and is judged on Steward's iteration alone", () => {
    const r = run({ ...passing, iteration: 8.5 });
    Object.assign(r.floors!, { skeleton: { bare: { p50: 6 }, design: { p50: 9 } } });
    expect(speedMusts(r)[0]).toEqual({
      target: "iteration ≤ 4× the step floor",
      measured: "8.50 ms = 4.25× the floor (2.00 ms); the design's skeleton alone 9.00 ms = 4.50×",
      met: false,
    });
  });

  it("given a service that crashed, then '0 crashes' is missed and names it", () => {
    const musts = speedMusts(run({ ...passing, crashes: [{ service: "runner", code: 1, signal: null, phase: "steward" }] }));
    expect(musts.at(-1)).toEqual({ target: "0 crashes", measured: "runner in steward", met: false });
  });

  it("given a run of some phases only, then the musts they cannot judge are n/a, never met or missed", () => {
    const partial = { ...run(passing), peer: undefined, gateway: undefined } as Results;
    const verdicts = speedMusts(partial);
    expect(verdicts.filter((t) => t.met === null).map((t) => t.target)).toEqual([
      "throughput at 8 concurrent ≥ 1.2× LangGraph.js (its default durability)",
      "CPU per iteration at 8 concurrent ≤ LangGraph.js's",
      "POST ≥ 25 % of raw PostgreSQL's rate at 64 connections, p99 < 50 ms",
    ]);
    expect(verdicts.find((t) => t.target === "iteration ≤ 4× the step floor")?.met).toBe(true);
  });
});

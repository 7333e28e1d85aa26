import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { StoredRunEvent } from "@steward/contract";
import { replayRun } from "./replay-run";

/**
 * Finished runs recorded by the runner of commit 6266695 (the loop before the decider), read from the event
 * store as readStream reads them: one run per distinct sequence of event types (with the failure, result and
 * decision codes, and for the crash suites the crash point and whether the run was resumed), taken from the
 * multi-service suites. String fields over 2000 characters are cut to 2000 (the same cut everywhere, so the
 * events still agree with each other).
 */
const runs: StoredRunEvent[][] = JSON.parse(readFileSync(join(__dirname, "fixtures", "recorded-6266695.json"), "utf8"));

/** How many runs the fixture was made with: an emptied or shortened fixture fails here. */
const RECORDED_RUNS = 58;

describe("replay of runs recorded by the previous runner (6266695)", () => {
  it(`holds the ${RECORDED_RUNS} recorded runs, each finished`, () => {
    expect(runs.length).toBeGreaterThanOrEqual(RECORDED_RUNS);
    const unfinished = runs.filter((events) => !replayRun(events).finished).map((events) => events[0]?.metadata.run_id);
    expect(unfinished).toEqual([]);
  });

  it("reproduces every recorded run: no divergence and the same final state", () => {
    const failures = runs
      .map((events) => ({ events, report: replayRun(events) }))
      .filter(({ report }) => report.divergence !== undefined || !report.sameFinalState)
      .map(({ events, report }) => {
        const at = report.divergence ? events.findIndex((e) => e.metadata.seq === report.divergence?.seq) : -1;
        const around = at < 0 ? [] : events.slice(Math.max(0, at - 3), at + 2).map((e) => `${e.metadata.seq}:${e.type}`);
        return {
          runId: report.runId,
          divergence: report.divergence,
          around,
          sameFinalState: report.sameFinalState,
          types: events.map((e) => e.type).join(","),
        };
      });
    expect(failures).toEqual([]);
  });
});

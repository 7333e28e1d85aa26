import { compareTable } from "./compare-table";

describe("compareTable", () => {
  it("puts each measure's values side by side, one column per run in the order they ran", () => {
    const table = compareTable([
      {
        label: "after 1",
        rows: [
          { section: "floor", measure: "step floor", value: "2.29 ms" },
          { section: "steward", measure: "throughput", value: "156 it/s" },
        ],
      },
      {
        label: "before 1",
        rows: [
          { section: "floor", measure: "step floor", value: "2.43 ms" },
          { section: "steward", measure: "throughput", value: "138 it/s" },
        ],
      },
    ]);
    expect(table.split("\n")).toEqual([
      "| | measure | after 1 | before 1 |",
      "| --- | --- | --- | --- |",
      "| floor | step floor | 2.29 ms | 2.43 ms |",
      "| steward | throughput | 156 it/s | 138 it/s |",
    ]);
  });

  it("leaves a cell empty where a run lacks the measure, and lists a measure only a later run has last", () => {
    const table = compareTable([
      { label: "a", rows: [{ section: "s", measure: "x", value: "1" }] },
      {
        label: "b",
        rows: [
          { section: "s", measure: "y", value: "2" },
          { section: "s", measure: "x", value: "3" },
        ],
      },
    ]);
    expect(table.split("\n").slice(2)).toEqual(["| s | x | 1 | 3 |", "| s | y |  | 2 |"]);
  });

  it("escapes a pipe in a measure or value so the Markdown table keeps its columns", () => {
    const table = compareTable([{ label: "a|b", rows: [{ section: "s", measure: "p50 | p99", value: "1 | 2" }] }]);
    expect(table.split("\n")[0]).toBe("| | measure | a\\|b |");
    expect(table.split("\n")[2]).toBe("| s | p50 \\| p99 | 1 \\| 2 |");
  });

  it("moves a number a run measured in a measure's name into its cell, so the runs' rows meet", () => {
    const table = compareTable([
      { label: "a", rows: [{ section: "s", measure: "throughput, 8 runs (iteration p50 54.0 ms)", value: "118 it/s" }] },
      { label: "b", rows: [{ section: "s", measure: "throughput, 8 runs (iteration p50 48.4 ms)", value: "141 it/s" }] },
      { label: "c", rows: [{ section: "s", measure: "time per iteration, median (1 run at a time)", value: "9 ms" }] },
    ]);
    expect(table.split("\n").slice(2)).toEqual([
      "| s | throughput, 8 runs | 118 it/s; iteration p50 54.0 ms | 141 it/s; iteration p50 48.4 ms |  |",
      "| s | time per iteration, median (1 run at a time) |  |  | 9 ms |",
    ]);
  });
});

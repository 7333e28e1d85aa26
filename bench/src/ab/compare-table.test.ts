import { compareTable } from "./compare-table";

describe("compareTable", () => {
  it("puts each measure's values side by side, one column per run in the order they ran", () => {
    const table = compareTable([
      { label: "after 1", rows: [{ section: "floor", measure: "step floor", value: "2.29 ms" }, { section: "steward", measure: "throughput", value: "156 it/s" }] },
      { label: "before 1", rows: [{ section: "floor", measure: "step floor", value: "2.43 ms" }, { section: "steward", measure: "throughput", value: "138 it/s" }] },
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
      { label: "b", rows: [{ section: "s", measure: "y", value: "2" }, { section: "s", measure: "x", value: "3" }] },
    ]);
    expect(table.split("\n").slice(2)).toEqual(["| s | x | 1 | 3 |", "| s | y |  | 2 |"]);
  });

  it("escapes a pipe in a measure or value so the Markdown table keeps its columns", () => {
    const table = compareTable([{ label: "a|b", rows: [{ section: "s", measure: "p50 | p99", value: "1 | 2" }] }]);
    expect(table.split("\n")[0]).toBe("| | measure | a\\|b |");
    expect(table.split("\n")[2]).toBe("| s | p50 \\| p99 | 1 \\| 2 |");
  });
});

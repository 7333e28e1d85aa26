import { runLanes, type ClaimedRow } from "./run-order";

const message = (id: string, run_id: string | null, extra: Partial<ClaimedRow> = {}): ClaimedRow => ({
  id,
  run_id,
  subject: `s.${id}`,
  msg_id: id,
  payload: "{}",
  headers: {},
  attempts: 0,
  ...extra,
});
/** The copy of run `run`'s event at `version`. */
const copy = (run: string, version: number) => message(`${run}${version}`, run, { version });
/** A command of `run` written after its version `after`, the run's events being on the bus up to `published`. */
const command = (id: string, run: string | null, after: number | null, published: number | null = 0) =>
  message(id, run, { after_version: after, published_version: run === null ? null : published });

/** The lanes as ids, in a fixed order: which lane comes first is not the point, each lane's order is. */
const ids = (lanes: ClaimedRow[][]) => lanes.map((lane) => lane.map((r) => r.id)).sort((x, y) => x[0].localeCompare(y[0]));

describe("runLanes: the order a relay publishes a batch in", () => {
  it("given a run's copies and commands, then each command goes after the copies up to its after_version and before the later ones", () => {
    const copies = [copy("a", 1), copy("a", 2), copy("a", 3)];
    const commands = [command("c0", "a", 0), command("c1", "a", 1), command("c1b", "a", 1), command("c3", "a", 3)];
    expect(ids(runLanes(copies, commands))).toEqual([["c0", "a1", "c1", "c1b", "a2", "a3", "c3"]]);
  });

  it("given several runs, then each is a lane of its own, its copies in version order", () => {
    const copies = [copy("a", 4), copy("a", 5), copy("b", 1), copy("b", 2)];
    expect(ids(runLanes(copies, [command("cb", "b", 1)]))).toEqual([
      ["a4", "a5"],
      ["b1", "cb", "b2"],
    ]);
  });

  it("given a command written after events neither on the bus nor claimed, then it and its run's later commands are left; the run's copies and other runs go", () => {
    // Run a's events are claimed up to 2, its first command follows version 3 (held by its writer, say).
    const copies = [copy("a", 1), copy("a", 2), copy("b", 1)];
    const commands = [command("ca1", "a", 1), command("ca3", "a", 3), command("ca2", "a", 2), command("cb1", "b", 1)];
    expect(ids(runLanes(copies, commands))).toEqual([
      ["a1", "ca1", "a2"],
      ["b1", "cb1"],
    ]);
  });

  it("given a run's commands all beyond reach and none of its copies claimed, then the run has no lane", () => {
    expect(runLanes([copy("b", 1)], [command("ca", "a", 2, 1)]).map((lane) => lane.map((r) => r.id))).toEqual([["b1"]]);
  });

  it("given commands of no run, then each is a lane of its own, whatever a run's commands wait for", () => {
    const commands = [command("n1", null, null), command("ca", "a", 9), command("n2", null, null)];
    expect(ids(runLanes([], commands))).toEqual([["n1"], ["n2"]]);
  });

  it("given the run's events on the bus up to published_version, then a command after them goes though none of its copies is claimed", () => {
    expect(ids(runLanes([], [command("c4", "a", 4, 4), command("c5", "a", 4, 4)]))).toEqual([["c4", "c5"]]);
    // One version short of the bus: left.
    expect(runLanes([], [command("c4", "a", 4, 3)])).toEqual([]);
  });

  it("given a run partly on the bus and the rest claimed, then reach is the last claimed copy: commands up to it go, in place", () => {
    const lanes = runLanes([copy("a", 3), copy("a", 4)], [command("c2", "a", 2, 2), command("c4", "a", 4, 2), command("c5", "a", 5, 2)]);
    expect(ids(lanes)).toEqual([["c2", "a3", "a4", "c4"]]);
  });
});

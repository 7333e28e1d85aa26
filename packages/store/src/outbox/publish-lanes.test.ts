import { lanesOf, publishLanes } from "./publish-lanes";
import { classifyPublishError } from "./publish-failure";

interface Row {
  readonly id: number;
  readonly run_id: string | null;
}

const row = (id: number, run_id: string | null): Row => ({ id, run_id });
const named = (name: string) => Object.assign(new Error(name), { name });

/** A publish that records the order rows were sent in, and any sent while an earlier row of its run was unacknowledged. */
function fakeBus(fails: ReadonlyMap<number, Error> = new Map()) {
  const sent: number[] = [];
  const sentWhileEarlierInFlight: number[] = [];
  const inFlight = new Set<Row>();
  const publish = async (r: Row) => {
    sent.push(r.id);
    if ([...inFlight].some((x) => x.run_id !== null && x.run_id === r.run_id)) sentWhileEarlierInFlight.push(r.id);
    inFlight.add(r);
    await Promise.resolve();
    inFlight.delete(r);
    const err = fails.get(r.id);
    if (err) throw err;
  };
  return { sent, sentWhileEarlierInFlight, publish };
}

describe("publishLanes: a run's rows one after the other, runs side by side", () => {
  it("groups rows by run, in row order; a row of no run is a lane of its own", () => {
    const rows = [row(1, "a"), row(2, "b"), row(3, null), row(4, "a"), row(5, null), row(6, "b")];
    expect(lanesOf(rows).map((lane) => lane.map((r) => r.id))).toEqual([[1, 4], [2, 6], [3], [5]]);
  });

  it("when every row goes, then each wave sends the next row of every lane, and no run's row is sent while its earlier one is unacknowledged", async () => {
    const rows = [row(1, "a"), row(2, "b"), row(3, "a"), row(4, "a"), row(5, "b")];
    const bus = fakeBus();
    const tried = await publishLanes(lanesOf(rows), bus.publish, classifyPublishError);
    expect(bus.sent).toEqual([1, 2, 3, 5, 4]);
    expect(bus.sentWhileEarlierInFlight).toEqual([]);
    expect(tried.map((t) => [t.row.id, t.failure])).toEqual([
      [1, null],
      [2, null],
      [3, null],
      [5, null],
      [4, null],
    ]);
  });

  it("given a run's row unanswered (a stream between leaders), then the run's later rows are not tried; other runs go on", async () => {
    const rows = [row(1, "a"), row(2, "b"), row(3, "a"), row(4, "b")];
    const bus = fakeBus(new Map([[1, named("NoStreamError")]]));
    const tried = await publishLanes(lanesOf(rows), bus.publish, classifyPublishError);
    expect(bus.sent).toEqual([1, 2, 4]);
    expect(tried.map((t) => [t.row.id, t.failure?.kind ?? "ok"])).toEqual([
      [1, "outage"],
      [2, "ok"],
      [4, "ok"],
    ]);
  });

  it("given a run's row refused, then that run stops there too; its later rows wait for it", async () => {
    const refusal = Object.assign(named("JetStreamApiError"), { status: 400, code: 10054 });
    const rows = [row(1, "a"), row(2, "a"), row(3, "b"), row(4, "b")];
    const bus = fakeBus(new Map([[1, refusal]]));
    const tried = await publishLanes(lanesOf(rows), bus.publish, classifyPublishError);
    expect(bus.sent).toEqual([1, 3, 4]);
    expect(tried[0]).toMatchObject({ row: { id: 1 }, failure: { kind: "refused" }, error: refusal });
  });

  it("given the bus away for one row, then the wave finishes and no further wave is sent", async () => {
    const timeout = named("TimeoutError");
    const rows = [row(1, "a"), row(2, "b"), row(3, "a"), row(4, "b")];
    const bus = fakeBus(new Map([[2, timeout]]));
    const tried = await publishLanes(lanesOf(rows), bus.publish, classifyPublishError);
    expect(bus.sent).toEqual([1, 2]);
    expect(tried.map((t) => t.row.id)).toEqual([1, 2]);
    expect(tried[1]).toMatchObject({ failure: { kind: "outage", noResponders: false }, error: timeout });
  });
});

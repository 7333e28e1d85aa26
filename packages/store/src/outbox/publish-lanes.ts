import { busAway, type PublishFailure } from "./publish-failure";

/** A claimed row: a run's rows form one lane; a row of no run is a lane of its own. */
export interface LaneRow {
  readonly run_id: string | null;
}

/** The rows, in their order, as lanes: one per run, each in row order. */
export function lanesOf<T extends LaneRow>(rows: readonly T[]): T[][] {
  const lanes: T[][] = [];
  const byRun = new Map<string, T[]>();
  for (const row of rows) {
    if (row.run_id === null) {
      lanes.push([row]);
      continue;
    }
    let lane = byRun.get(row.run_id);
    if (!lane) {
      lane = [];
      byRun.set(row.run_id, lane);
      lanes.push(lane);
    }
    lane.push(row);
  }
  return lanes;
}

/** A row that was tried, with why it failed (null: on the stream) and the error it failed with. */
export interface Tried<T> {
  readonly row: T;
  readonly failure: PublishFailure | null;
  readonly error?: unknown;
}

/**
 * Tries the lanes in waves: each wave sends the next row of every lane still going, together (one write, in
 * lane order); a lane's next row goes only once its row before was acknowledged, so that no failure, however
 * brief (a stream between two leaders answers nobody for a moment), can put a run's later row on the stream
 * before an earlier one. A failure ends its lane; a wave in which the bus was away is the last. Rows not
 * returned were not tried.
 */
export async function publishLanes<T>(
  lanes: readonly (readonly T[])[],
  publish: (row: T) => Promise<unknown>,
  classify: (err: unknown) => PublishFailure,
): Promise<Tried<T>[]> {
  const tried: Tried<T>[] = [];
  let going = lanes.filter((lane) => lane.length > 0).map((lane) => ({ lane, next: 0 }));
  while (going.length > 0) {
    const wave = going.map((g) => g.lane[g.next]);
    const results = await Promise.allSettled(wave.map(publish));
    let away = false;
    const still: typeof going = [];
    results.forEach((result, i) => {
      const error = result.status === "rejected" ? result.reason : undefined;
      const failure = result.status === "rejected" ? classify(error) : null;
      tried.push({ row: wave[i], failure, error });
      if (busAway(failure)) away = true;
      const g = going[i];
      if (!failure && g.next + 1 < g.lane.length) still.push({ lane: g.lane, next: g.next + 1 });
    });
    if (away) break;
    going = still;
  }
  return tried;
}

import type { OutboxRow } from "./outbox-row";

/** A claimed message: a copy of a run's event (`version`) or an outbox row (a command, or a message of no run). */
export interface ClaimedRow extends OutboxRow {
  readonly run_id: string | null;
  /** Refusals counted for it so far. */
  readonly attempts: number;
  /** An outbox row of a run: the run's version it was written after (its events up to it go first). */
  readonly after_version?: number | null;
  /** An outbox row of a run: how far the run's events are on the bus. */
  readonly published_version?: number | null;
}

/**
 * The lanes a relay publishes a batch in (`publishLanes`): one per run, its copies in version order with each
 * command after the copies written before it; a message of no run is a lane of its own. A command whose run's
 * earlier events are neither on the bus nor in the batch (held, or beyond the batch) is left for later, and so
 * are the run's commands after it. `copies` come in version order per run, `commands` in id order.
 */
export function runLanes<T extends ClaimedRow>(copies: readonly T[], commands: readonly T[]): T[][] {
  const lanes: T[][] = [];
  const byRun = new Map<string, { copies: T[]; commands: T[]; blocked: boolean }>();
  const laneOf = (runId: string) => {
    let lane = byRun.get(runId);
    if (!lane) byRun.set(runId, (lane = { copies: [], commands: [], blocked: false }));
    return lane;
  };
  for (const copy of copies) laneOf(copy.run_id!).copies.push(copy);
  for (const command of commands) {
    if (command.run_id === null) {
      lanes.push([command]);
      continue;
    }
    const lane = laneOf(command.run_id);
    const reach = Math.max(command.published_version ?? 0, lane.copies.at(-1)?.version ?? 0);
    if (lane.blocked || (command.after_version ?? 0) > reach) lane.blocked = true;
    else lane.commands.push(command);
  }
  for (const lane of byRun.values()) {
    const merged: T[] = [];
    let next = 0;
    for (const copy of lane.copies) {
      while (next < lane.commands.length && (lane.commands[next].after_version ?? 0) < copy.version!) merged.push(lane.commands[next++]);
      merged.push(copy);
    }
    merged.push(...lane.commands.slice(next));
    if (merged.length > 0) lanes.push(merged);
  }
  return lanes;
}

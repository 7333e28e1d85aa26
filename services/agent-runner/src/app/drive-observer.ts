import type { RunEvent } from "@steward/contract";

/** What the loop and the reaper tell the metrics (a port: app/ declares it, adapters/metrics implements it). */
export interface DriveObserver {
  /** Events this runner committed for a run, in order (after the commit). */
  committed(events: readonly RunEvent[]): void;
  /** One step (a model call and the tool calls it asked for) ended after `seconds`. */
  stepEnded(seconds: number): void;
}

/**
 * Times steps for an observer: a step begins when the loop first asks the model for it and ends when the
 * next step begins or the drive stops (finished, waiting, retry). A drive lost mid-step reports nothing.
 */
export function stepClock(observer: DriveObserver | undefined) {
  let open: { stepNo: number; startedAt: number } | null = null;
  return {
    begin(stepNo: number): void {
      if (!observer || open?.stepNo === stepNo) return;
      const now = performance.now();
      if (open) observer.stepEnded((now - open.startedAt) / 1000);
      open = { stepNo, startedAt: now };
    },
    end(): void {
      if (observer && open) observer.stepEnded((performance.now() - open.startedAt) / 1000);
      open = null;
    },
  };
}

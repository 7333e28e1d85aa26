import type { RunEvent } from "@steward/contract";
import { metricCatalog, noCode, type Metrics } from "@steward/platform";
import type { DriveObserver } from "../../app/drive-observer";

const terminal: Readonly<Record<string, string>> = { "run.succeeded": "succeeded", "run.failed": "failed", "run.cancelled": "cancelled" };

/** The loop's and the reaper's observer: runs ended by state and error code, and step durations. */
export function runMetrics(metrics: Metrics): DriveObserver {
  const finished = metrics.counter(metricCatalog.runsFinished);
  const steps = metrics.histogram(metricCatalog.stepDuration);
  return {
    committed(events: readonly RunEvent[]) {
      for (const event of events) {
        const state = terminal[event.type];
        if (!state) continue;
        const code = event.type === "run.failed" || event.type === "run.cancelled" ? String(event.data.error.code) : noCode;
        finished.inc({ state, code });
      }
    },
    stepEnded(seconds) {
      steps.observe({}, seconds);
    },
  };
}

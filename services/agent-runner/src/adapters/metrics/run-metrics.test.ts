import { createMetrics, sampleValue } from "@steward/platform";
import { stepClock } from "../../app/drive-observer";
import { runMetrics } from "./run-metrics";

describe("run metrics", () => {
  it("counts terminal events by state and error code, and nothing else", async () => {
    const metrics = createMetrics("agent-runner", { defaults: false });
    const observer = runMetrics(metrics);
    const error = (code: number) => ({ code, message: "m" });
    observer.committed([
      { type: "run.started", data: { runner_id: "r", started_at: "2026-12-01T00:00:00.000000Z" } },
      { type: "run.succeeded", data: { output: { text: "t", evidence: [] }, finished_at: "2026-12-01T00:00:00.000000Z" } },
    ] as never);
    observer.committed([{ type: "run.failed", data: { error: error(60402), finished_at: "x" } }] as never);
    observer.committed([{ type: "run.failed", data: { error: error(60402), finished_at: "x" } }] as never);
    observer.committed([{ type: "run.cancelled", data: { error: error(60405), finished_at: "x" } }] as never);
    const text = await metrics.text();
    expect(sampleValue(text, "steward_runs_finished_total", { state: "succeeded", code: "none" })).toBe(1);
    expect(sampleValue(text, "steward_runs_finished_total", { state: "failed", code: "60402" })).toBe(2);
    expect(sampleValue(text, "steward_runs_finished_total", { state: "cancelled", code: "60405" })).toBe(1);
    expect(sampleValue(text, "steward_runs_finished_total")).toBe(4);
  });

  it("times steps: a new step number closes the previous one, the same one does not, the end closes the last", async () => {
    const metrics = createMetrics("agent-runner", { defaults: false });
    const steps = stepClock(runMetrics(metrics));
    steps.begin(1);
    steps.begin(1); // the same step asked again (after a compaction): still one step
    steps.begin(2);
    steps.end();
    steps.end(); // nothing open: nothing more
    const text = await metrics.text();
    expect(sampleValue(text, "steward_run_step_duration_seconds_count")).toBe(2);
    expect(sampleValue(text, "steward_run_step_duration_seconds_sum")).toBeGreaterThanOrEqual(0);
  });

  it("costs nothing without an observer", () => {
    const steps = stepClock(undefined);
    expect(() => {
      steps.begin(1);
      steps.end();
    }).not.toThrow();
  });
});

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "@jest/globals";
import { formatMs, waterfallOf, type TimedEvent } from "./waterfall";

/** An event recorded `ms` after 12:00:00 (microseconds, as the store writes them). */
let seq = 0;
const at = (ms: number, type: string, data: Record<string, unknown> = {}): TimedEvent => ({
  seq: ++seq,
  type,
  data,
  recorded_at: new Date(Date.UTC(2026, 0, 1, 12, 0, 0) + ms).toISOString().replace("Z", "000Z"),
});

const brief = (events: TimedEvent[], now?: number) =>
  waterfallOf(events, now).bars.map((b) => [b.kind, b.label, b.startMs, b.durationMs, ...(b.open ? ["open"] : []), ...(b.slowest ? ["slowest"] : [])]);

describe("waterfallOf", () => {
  it("splits a run with a tool call into queue, model, policy + tool and model again; the slowest is marked", () => {
    const events = [
      at(0, "run.queued"),
      at(40, "run.started"),
      at(340, "thought", { step_no: 1, tool_calls: [] }),
      at(341, "tool_call", { step_no: 1, call_id: "k0", tool_name: "knowledge_search" }),
      at(1341, "tool.decided", { step_no: 1, call_id: "k0", permit: true }),
      at(1342, "tool_result", { step_no: 1, call_id: "k0", result_code: "ok" }),
      at(1542, "message", { step_no: 2, text: "done" }),
      at(1543, "run.succeeded"),
    ];
    expect(waterfallOf(events).totalMs).toBe(1543);
    expect(brief(events)).toEqual([
      ["queue", "queued", 0, 40],
      ["model", "step 1 · model (tool calls)", 40, 300],
      ["tool", "step 1 · knowledge_search (policy + tool)", 341, 1001, "slowest"],
      ["model", "step 2 · model (answer)", 1342, 200],
    ]);
  });

  it("counts a confirmation as waiting for a person, then the time back in the queue, then the tool", () => {
    const events = [
      at(0, "run.queued"),
      at(10, "run.started"),
      at(110, "thought", { step_no: 1 }),
      at(111, "confirmation_required", { step_no: 1, call_id: "n0", tool_name: "save_note" }),
      at(5111, "confirmation.decided", { call_id: "n0", decision: "approve" }),
      at(5131, "tool_call", { step_no: 1, call_id: "n0", tool_name: "save_note" }),
      at(5181, "tool.decided", { step_no: 1, call_id: "n0" }),
      at(5182, "tool_result", { step_no: 1, call_id: "n0" }),
      at(5282, "message", { step_no: 2 }),
      at(5283, "run.succeeded"),
    ];
    expect(brief(events)).toEqual([
      ["queue", "queued", 0, 10],
      ["model", "step 1 · model (tool calls)", 10, 100],
      ["wait", "step 1 · waiting for approval", 111, 5000, "slowest"],
      ["resume", "back in the queue", 5111, 20],
      ["tool", "step 1 · save_note (policy + tool)", 5131, 51],
      ["model", "step 2 · model (answer)", 5182, 100],
    ]);
  });

  it("draws an unanswered question up to now, open, and a question a cancelled run never got an answer to up to its end", () => {
    const waiting = [at(0, "run.queued"), at(5, "run.started"), at(25, "thought", { step_no: 1 }), at(26, "ask_user", { step_no: 1, call_id: "q0" })];
    const now = Date.parse(waiting[0].recorded_at!) + 1026;
    expect(brief(waiting, now)).toEqual([
      ["queue", "queued", 0, 5],
      ["model", "step 1 · model (tool calls)", 5, 20],
      ["wait", "step 1 · waiting for an answer", 26, 1000, "open", "slowest"],
    ]);
    expect(waterfallOf(waiting, now).totalMs).toBe(1026);

    const cancelled = [...waiting, at(500, "run.cancel_requested"), at(520, "run.cancelled")];
    expect(brief(cancelled, now + 60_000).at(-1)).toEqual(["wait", "step 1 · waiting for an answer", 26, 494, "slowest"]);
    expect(waterfallOf(cancelled, now + 60_000).totalMs).toBe(520);
  });

  it("does not start a model call at a cancel request or a provider fallback; a truncated answer ends a model call", () => {
    const events = [
      at(0, "run.queued"),
      at(10, "run.started"),
      at(60, "run.cancel_requested"),
      at(209, "provider.fallback", { step_no: 1 }),
      at(210, "message.truncated", { step_no: 1, continuation: 1 }),
      at(300, "message", { step_no: 1 }),
      at(301, "run.succeeded"),
    ];
    expect(brief(events).filter(([kind]) => kind === "model")).toEqual([
      ["model", "step 1 · model (cut at its output limit)", 10, 200, "slowest"],
      ["model", "step 1 · model (answer)", 210, 90],
    ]);
  });

  it("ignores live-only events and has nothing to show before the first stored event", () => {
    expect(waterfallOf([{ type: "message.delta", data: { delta: "x" } }])).toEqual({ totalMs: 0, bars: [] });
  });

  it("never draws a negative bar or one past the run's end, for any run the previous runner recorded", () => {
    type Recorded = { type: string; data: Record<string, unknown>; metadata: { seq: number; recorded_at: string } };
    const fixture = join(__dirname, "..", "..", "..", "services", "agent-runner", "src", "app", "fixtures", "recorded-6266695.json");
    const runs = JSON.parse(readFileSync(fixture, "utf8")) as Recorded[][];
    expect(runs.length).toBeGreaterThan(50);
    for (const run of runs) {
      const w = waterfallOf(run.map((e) => ({ type: e.type, data: e.data, seq: e.metadata.seq, recorded_at: e.metadata.recorded_at })));
      // A run a runner started has its time in the queue.
      expect(w.bars.some((b) => b.kind === "queue")).toBe(run.some((e) => e.type === "run.started"));
      for (const b of w.bars) {
        expect(b.startMs).toBeGreaterThanOrEqual(0);
        expect(b.durationMs).toBeGreaterThanOrEqual(0);
        expect(b.startMs + b.durationMs).toBeLessThanOrEqual(w.totalMs);
        expect(b.open).toBe(false);
      }
      expect(w.bars.filter((b) => b.slowest).length).toBeLessThanOrEqual(1);
      // Every model answer the run recorded has its bar.
      expect(w.bars.filter((b) => b.kind === "model").length).toBe(run.filter((e) => ["thought", "message", "message.truncated"].includes(e.type)).length);
    }
  });
});

describe("formatMs", () => {
  it("keeps ms under a second, tenths of seconds under a minute", () => {
    expect([formatMs(0), formatMs(412.4), formatMs(3240), formatMs(125_000)]).toEqual(["0 ms", "412 ms", "3.2 s", "2 min 5 s"]);
  });
});

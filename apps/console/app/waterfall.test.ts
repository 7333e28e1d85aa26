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
  it("splits a run with a tool call recorded without timings into queue, model, policy + tool and model again; the slowest is marked", () => {
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
      ["policy-tool", "step 1 · knowledge_search (policy + tool)", 341, 1001, "slowest"],
      ["model", "step 2 · model (answer)", 1342, 200],
    ]);
  });

  it("splits a timed tool call into the PDP's decision, then the tool, then the rest, inside the call's span", () => {
    const search = { step_no: 1, call_id: "k0", tool_name: "knowledge_search" };
    const events = [
      at(0, "run.queued"),
      at(40, "run.started"),
      at(340, "thought", { step_no: 1, tool_calls: [] }),
      at(341, "tool_call", search),
      at(2341, "tool.decided", { ...search, permit: true }),
      at(2342, "tool_result", { ...search, decision: { permit: true }, result_code: "ok", timings: { decision_ms: 1800, tool_ms: 190 } }),
      at(2542, "message", { step_no: 2, text: "done" }),
      at(2543, "run.succeeded"),
    ];
    expect(brief(events)).toEqual([
      ["queue", "queued", 0, 40],
      ["model", "step 1 · model (tool calls)", 40, 300],
      // A slow PDP is the slowest bar, not the tool.
      ["pdp", "step 1 · knowledge_search (policy)", 341, 1800, "slowest"],
      ["tool", "step 1 · knowledge_search (tool)", 2141, 190],
      ["records", "step 1 · knowledge_search (transport + records)", 2331, 11],
      ["model", "step 2 · model (answer)", 2342, 200],
    ]);

    // A slow tool, the other way round; the three bars still end where the call did.
    const slowTool = events.map((e) => (e.type === "tool_result" ? { ...e, data: { ...e.data, timings: { decision_ms: 4, tool_ms: 1990 } } } : e));
    expect(brief(slowTool).slice(2, 5)).toEqual([
      ["pdp", "step 1 · knowledge_search (policy)", 341, 4],
      ["tool", "step 1 · knowledge_search (tool)", 345, 1990, "slowest"],
      ["records", "step 1 · knowledge_search (transport + records)", 2335, 7],
    ]);
  });

  it("draws no tool bar for a denied call, keeps tool-exec's times inside the call's span, and ignores timings it cannot read", () => {
    const call = { step_no: 1, call_id: "n0", tool_name: "save_note" };
    const run = (result: Record<string, unknown>) => [
      at(0, "run.queued"),
      at(10, "run.started"),
      at(110, "thought", { step_no: 1 }),
      at(111, "tool_call", call),
      at(161, "tool_result", { ...call, ...result }),
      at(261, "message", { step_no: 2 }),
      at(262, "run.succeeded"),
    ];
    const tools = (result: Record<string, unknown>) => brief(run(result)).filter(([kind]) => kind !== "queue" && kind !== "model");
    expect(tools({ decision: { permit: false }, result_code: "60500", timings: { decision_ms: 30, tool_ms: 0 } })).toEqual([
      ["pdp", "step 1 · save_note (policy, denied)", 111, 30],
      ["records", "step 1 · save_note (transport + records)", 141, 20],
    ]);
    // tool-exec's clock is not the store's: times past the call's end are cut at it.
    expect(tools({ decision: { permit: true }, timings: { decision_ms: 45, tool_ms: 9 } })).toEqual([
      ["pdp", "step 1 · save_note (policy)", 111, 45],
      ["tool", "step 1 · save_note (tool)", 156, 5],
      ["records", "step 1 · save_note (transport + records)", 161, 0],
    ]);
    for (const timings of [{}, { decision_ms: "45", tool_ms: 9 }, { decision_ms: -1, tool_ms: 9 }, null]) {
      expect(tools({ decision: { permit: true }, timings })).toEqual([["policy-tool", "step 1 · save_note (policy + tool)", 111, 50]]);
    }
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
      ["policy-tool", "step 1 · save_note (policy + tool)", 5131, 51],
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
      // Recorded before tool-exec timed its calls: every finished tool call is one policy + tool bar.
      expect(w.bars.some((b) => b.kind === "pdp" || b.kind === "tool" || b.kind === "records")).toBe(false);
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

import { foldRun, parseMicros, type Evidence, type RunEvent } from "@steward/contract";
import { eventsForAnswer } from "./answer";
import type { ModelAnswer } from "./model";
import { nextStep } from "./next-step";

const deadline = "2026-11-30T09:03:00.000000Z";
const beforeDeadline = parseMicros(deadline) - 1n;
const registered = new Set(["search"]);

const queued: RunEvent = {
  type: "run.queued",
  data: {
    input: "q",
    mode: "agent",
    response_language: null,
    created_by: "u",
    created_at: "2026-11-30T09:00:00.000000Z",
    deadline_at: deadline,
    thread_id: null,
  },
};
const started: RunEvent = { type: "run.started", data: { runner_id: "r", started_at: "2026-11-30T09:00:01.000000Z" } };
const thought = (step: number, calls: Array<{ tool: string; args: string }>): RunEvent => ({
  type: "thought",
  data: {
    step_no: step,
    text: "",
    tool_calls: calls.map((c, i) => ({ call_id: `c${step}-${i}`, tool_name: c.tool, arguments: c.args })),
    usage: { input_tokens: 1, output_tokens: 1 },
    provider: "primary",
  },
});
const result = (step: number, callId: string, evidence: Evidence[] = []): RunEvent => ({
  type: "tool_result",
  data: {
    step_no: step,
    call_id: callId,
    tool_name: "search",
    fingerprint: "f",
    result_code: "ok",
    result: {},
    evidence,
    decision: { permit: true, code: "", policy_ids: [] },
  },
});
const running = (...more: RunEvent[]) => foldRun([queued, started, ...more]);

describe("nextStep", () => {
  it("given only run.queued, then start", () => {
    expect(nextStep(foldRun([queued]), beforeDeadline, registered)).toEqual({ kind: "start" });
  });

  it("given a run at or past its deadline, then fail 60402", () => {
    for (const now of [parseMicros(deadline), parseMicros(deadline) + 5n]) {
      const step = nextStep(running(), now, registered);
      expect(step).toMatchObject({ kind: "fail", error: { code: 60402 } });
    }
  });

  it("given a pending call to an unregistered tool, then fail 60200 naming the tool", () => {
    const step = nextStep(running(thought(1, [{ tool: "rm_rf", args: "{}" }])), beforeDeadline, registered);
    expect(step).toMatchObject({ kind: "fail", error: { code: 60200, tool_name: "rm_rf", step_no: 1 } });
  });

  it.each(["{not json", "[1]", "null", '"text"'])("given tool arguments %p, then fail 60302", (args) => {
    const step = nextStep(running(thought(1, [{ tool: "search", args }])), beforeDeadline, registered);
    expect(step).toMatchObject({ kind: "fail", error: { code: 60302, tool_name: "search" } });
  });

  it("given a valid pending call, then run that tool, in the model's order", () => {
    const state = running(
      thought(1, [
        { tool: "search", args: '{"q":"a"}' },
        { tool: "search", args: '{"q":"b"}' },
      ]),
    );
    expect(nextStep(state, beforeDeadline, registered)).toEqual({ kind: "run_tool", call: state.pending_calls[0] });
    expect(state.pending_calls[0].arguments).toBe('{"q":"a"}');
    const after = running(
      thought(1, [
        { tool: "search", args: '{"q":"a"}' },
        { tool: "search", args: '{"q":"b"}' },
      ]),
      result(1, "c1-0"),
    );
    expect(nextStep(after, beforeDeadline, registered)).toMatchObject({ kind: "run_tool", call: { call_id: "c1-1" } });
  });

  it("given step 25 with no pending call, then fail 60401", () => {
    const state = running(thought(25, [{ tool: "search", args: "{}" }]), result(25, "c25-0"));
    expect(nextStep(state, beforeDeadline, registered)).toMatchObject({ kind: "fail", error: { code: 60401, step_no: 25 } });
  });

  it("given step 24 with no pending call, then the model is still called for step 25", () => {
    const state = running(thought(24, [{ tool: "search", args: "{}" }]), result(24, "c24-0"));
    expect(nextStep(state, beforeDeadline, registered)).toEqual({ kind: "call_model", stepNo: 25 });
  });

  it("given a started run with nothing pending, then call the model for step_no + 1", () => {
    expect(nextStep(running(), beforeDeadline, registered)).toEqual({ kind: "call_model", stepNo: 1 });
    const state = running(thought(3, [{ tool: "search", args: "" }]), result(3, "c3-0"));
    expect(nextStep(state, beforeDeadline, registered)).toEqual({ kind: "call_model", stepNo: 4 });
  });

  it("given a terminal run, then done, even past the deadline", () => {
    const failed: RunEvent = { type: "run.failed", data: { error: { code: 60300, message: "x" }, finished_at: deadline } };
    expect(nextStep(running(failed), parseMicros(deadline) + 10n, registered)).toEqual({ kind: "done" });
  });

  it("given no events, then it refuses to drive the run", () => {
    expect(() => nextStep(foldRun([]), beforeDeadline, registered)).toThrow(RangeError);
  });
});

const answer = (over: Partial<ModelAnswer>): ModelAnswer => ({
  text: "",
  toolCalls: [],
  finishReason: "stop",
  usage: { input_tokens: 3, output_tokens: 2 },
  provider: "primary",
  ...over,
});
const at = "2026-11-30T09:01:00.000000Z";

describe("eventsForAnswer", () => {
  it("given tool calls, then a single thought carrying them", () => {
    const events = eventsForAnswer(
      running(),
      1,
      answer({ text: "hm", finishReason: "tool_calls", toolCalls: [{ id: "x", name: "search", arguments: '{"q":1}' }] }),
      at,
    );
    expect(events).toEqual([
      {
        type: "thought",
        data: {
          step_no: 1,
          text: "hm",
          tool_calls: [{ call_id: "x", tool_name: "search", arguments: '{"q":1}' }],
          usage: { input_tokens: 3, output_tokens: 2 },
          provider: "primary",
        },
      },
    ]);
  });

  it("given final text, then message and run.succeeded with the state's evidence", () => {
    const doc: Evidence = { document_id: "d1", title: "Refunds", snippet: "s", score: 1 };
    const state = running(thought(1, [{ tool: "search", args: "{}" }]), result(1, "c1-0", [doc]));
    const events = eventsForAnswer(state, 2, answer({ text: "See Refunds." }), at);
    expect(events.map((e) => e.type)).toEqual(["message", "run.succeeded"]);
    expect(events[0]).toMatchObject({ data: { step_no: 2, text: "See Refunds." } });
    expect(events[1]).toEqual({ type: "run.succeeded", data: { output: { text: "See Refunds.", evidence: [doc] }, finished_at: at } });
    expect(foldRun(events, state)).toMatchObject({ status: "succeeded", step_no: 2 });
  });

  it.each(["", "  \n"])("given empty text %j, then run.failed 60302", (text) => {
    const events = eventsForAnswer(running(), 1, answer({ text }), at);
    expect(events).toEqual([{ type: "run.failed", data: { error: expect.objectContaining({ code: 60302, step_no: 1 }), finished_at: at } }]);
  });

  it("given a length stop with text, then the text is kept and the model is asked to continue", () => {
    const events = eventsForAnswer(running(), 4, answer({ text: "partial answ", finishReason: "length" }), at);
    expect(events).toEqual([{ type: "message.truncated", data: expect.objectContaining({ step_no: 4, text: "partial answ", continuation: 1 }) }]);
  });

  it("given two continuations already, then a third length stop ends the run with the parts as the answer", () => {
    const truncated = (n: number): RunEvent => ({
      type: "message.truncated",
      data: { step_no: n, text: `part${n} `, usage: { input_tokens: 1, output_tokens: 1 }, provider: "p", continuation: n },
    });
    const events = eventsForAnswer(running(truncated(1), truncated(2)), 3, answer({ text: "end", finishReason: "length" }), at);
    expect(events[1]).toEqual({ type: "run.succeeded", data: { output: { text: "part1 part2 end", evidence: [] }, finished_at: at } });
  });
});

describe("nextStep in a thread", () => {
  const inThread: RunEvent = { ...queued, data: { ...(queued.data as object), thread_id: "thread-1" } } as RunEvent;
  const history: RunEvent = { type: "context.history", data: { thread_id: "thread-1", turns: [], dropped: [], tokens: 0, budget_tokens: 100 } };

  it("given a started run in a thread without its history, then load it before the first model call", () => {
    expect(nextStep(foldRun([inThread]), beforeDeadline, registered)).toEqual({ kind: "start" });
    expect(nextStep(foldRun([inThread, started]), beforeDeadline, registered)).toEqual({ kind: "load_history" });
    expect(nextStep(foldRun([inThread, started, history]), beforeDeadline, registered)).toEqual({ kind: "call_model", stepNo: 1 });
  });

  it("given the deadline passed, then the failure comes before the load", () => {
    expect(nextStep(foldRun([inThread, started]), parseMicros(deadline), registered)).toMatchObject({ kind: "fail", error: { code: 60402 } });
  });

  it("given a run in a thread that made model calls without a recorded history, then it goes on without one", () => {
    const midway = foldRun([inThread, started, thought(1, [{ tool: "search", args: "{}" }]), result(1, "c1-0")]);
    expect(nextStep(midway, beforeDeadline, registered)).toEqual({ kind: "call_model", stepNo: 2 });
  });
});

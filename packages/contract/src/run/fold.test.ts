import type { Evidence, RunEvent } from "../events";
import { evolve, foldRun, initialRunState } from "./fold";

const queued: RunEvent = {
  type: "run.queued",
  data: {
    input: "What is our refund policy?",
    mode: "ask",
    response_language: "de",
    created_by: "user-7",
    created_at: "2026-11-30T09:00:00.000001Z",
    deadline_at: "2026-11-30T09:03:00.000001Z",
    thread_id: "thread-1",
  },
};
const started = (at: string): RunEvent => ({ type: "run.started", data: { runner_id: "r1", started_at: at } });
const thought = (step: number, callIds: string[], input = 10, output = 5): RunEvent => ({
  type: "thought",
  data: {
    step_no: step,
    text: "",
    tool_calls: callIds.map((id) => ({ call_id: id, tool_name: "search", arguments: "{}" })),
    usage: { input_tokens: input, output_tokens: output },
    provider: "primary",
  },
});
const ev = (id: string, title = id): Evidence => ({ document_id: id, title, snippet: "s", score: 0.5 });
const toolResult = (callId: string, evidence: Evidence[]): RunEvent => ({
  type: "tool_result",
  data: {
    step_no: 1,
    call_id: callId,
    tool_name: "search",
    fingerprint: "f".repeat(64),
    decision: { permit: true, code: "", policy_ids: [] },
    result_code: "ok",
    result: {},
    evidence,
  },
});

describe("run fold", () => {
  it("given run.queued, then the snapshot fields come from the event", () => {
    const s = foldRun([queued]);
    expect(s).toMatchObject({
      status: "queued",
      mode: "ask",
      input: "What is our refund policy?",
      response_language: "de",
      created_by: "user-7",
      thread_id: "thread-1",
      created_at: "2026-11-30T09:00:00.000001Z",
      deadline_at: "2026-11-30T09:03:00.000001Z",
      started_at: null,
      version: 1,
    });
  });

  it("given run.started, then the run is running with started_at set", () => {
    const s = foldRun([queued, started("2026-11-30T09:00:01.000000Z")]);
    expect(s.status).toBe("running");
    expect(s.started_at).toBe("2026-11-30T09:00:01.000000Z");
  });

  it("given a second run.started, then the first started_at is kept", () => {
    const s = foldRun([queued, started("2026-11-30T09:00:01.000000Z"), started("2026-11-30T09:00:09.000000Z")]);
    expect(s.started_at).toBe("2026-11-30T09:00:01.000000Z");
    expect(s.version).toBe(3);
  });

  it("given thoughts, then step_no, pending calls and model usage follow them", () => {
    const s = foldRun([queued, started("2026-11-30T09:00:01.000000Z"), thought(1, ["a"], 10, 5), thought(2, ["b", "c"], 7, 3)]);
    expect(s.step_no).toBe(2);
    expect(s.pending_calls.map((c) => c.call_id)).toEqual(["b", "c"]);
    expect(s.usage).toEqual({ input_tokens: 17, output_tokens: 8, model_calls: 2, tool_calls: 0 });
  });

  it("given tool results, then the call is no longer pending and evidence is merged by document_id", () => {
    const s = foldRun([queued, thought(1, ["a", "b"]), toolResult("a", [ev("d1", "first"), ev("d2")]), toolResult("b", [ev("d1", "duplicate"), ev("d3")])]);
    expect(s.pending_calls).toEqual([]);
    expect(s.usage.tool_calls).toBe(2);
    expect(s.evidence.map((e) => e.document_id)).toEqual(["d1", "d2", "d3"]);
    expect(s.evidence[0].title).toBe("first");
  });

  it("given one of two results, then only the other call stays pending", () => {
    const s = foldRun([queued, thought(1, ["a", "b"]), toolResult("a", [])]);
    expect(s.pending_calls.map((c) => c.call_id)).toEqual(["b"]);
  });

  it("given a message, then usage and model_calls grow and step_no follows it", () => {
    const msg: RunEvent = {
      type: "message",
      data: { step_no: 2, text: "answer", usage: { input_tokens: 100, output_tokens: 40 }, provider: "primary" },
    };
    const s = foldRun([queued, thought(1, [], 10, 5), msg]);
    expect(s.usage).toMatchObject({ input_tokens: 110, output_tokens: 45, model_calls: 2 });
    expect(s.step_no).toBe(2);
  });

  it("given run.succeeded, then status, output and finished_at are set", () => {
    const output = { text: "done", evidence: [ev("d1")] };
    const s = foldRun([queued, { type: "run.succeeded", data: { output, finished_at: "2026-11-30T09:01:00.000000Z" } }]);
    expect(s.status).toBe("succeeded");
    expect(s.output).toEqual(output);
    expect(s.error).toBeNull();
    expect(s.finished_at).toBe("2026-11-30T09:01:00.000000Z");
  });

  it("given run.failed, then status, error and finished_at are set", () => {
    const error = { code: 60402, message: "the run's deadline passed" };
    const s = foldRun([queued, { type: "run.failed", data: { error, finished_at: "2026-11-30T09:03:00.000001Z" } }]);
    expect(s.status).toBe("failed");
    expect(s.error).toEqual(error);
    expect(s.output).toBeNull();
    expect(s.finished_at).toBe("2026-11-30T09:03:00.000001Z");
  });

  it("counts every event in version, including tool_call", () => {
    const call: RunEvent = { type: "tool_call", data: { step_no: 1, call_id: "a", tool_name: "search", arguments: "{}" } };
    const events = [queued, started("2026-11-30T09:00:01.000000Z"), thought(1, ["a"]), call, toolResult("a", [])];
    expect(foldRun(events).version).toBe(events.length);
    expect(foldRun([]).version).toBe(0);
  });

  it("does not mutate the state it folds from", () => {
    const before = foldRun([queued]);
    evolve(before, started("2026-11-30T09:00:01.000000Z"));
    expect(before.status).toBe("queued");
    expect(initialRunState.version).toBe(0);
  });

  it("given a confirmation request with a fingerprint, then the run awaits that exact call and the decision is bound to it", () => {
    const asked: RunEvent = {
      type: "confirmation_required",
      data: { step_no: 1, call_id: "a", tool_name: "save_note", arguments: "{}", asked_at: "2026-11-30T09:00:02.000000Z", fingerprint: "1".repeat(64) },
    };
    const waiting = foldRun([queued, thought(1, ["a"]), asked]);
    expect(waiting.status).toBe("awaiting_confirmation");
    expect(waiting.awaiting).toEqual({ kind: "confirmation", call_id: "a", since: "2026-11-30T09:00:02.000000Z", fingerprint: "1".repeat(64) });
    expect(waiting.confirmations).toEqual([{ call_id: "a", fingerprint: "1".repeat(64), decision: null }]);
    const decided: RunEvent = {
      type: "confirmation.decided",
      data: { call_id: "a", decision: "approve", deadline_at: "2026-11-30T09:04:00.000001Z", decided_at: "2026-11-30T09:01:00.000000Z" },
    };
    // Without a fingerprint of its own, the decision decides the request the run awaited.
    const s = evolve(waiting, decided);
    expect(s).toMatchObject({ status: "running", awaiting: null, deadline_at: "2026-11-30T09:04:00.000001Z" });
    expect(s.confirmations).toEqual([{ call_id: "a", fingerprint: "1".repeat(64), decision: "approve" }]);
  });

  it("given a confirmation recorded before approvals were bound, then it folds as before: by call id, no fingerprint", () => {
    const asked: RunEvent = {
      type: "confirmation_required",
      data: { step_no: 1, call_id: "a", tool_name: "save_note", arguments: "{}", asked_at: "2026-11-30T09:00:02.000000Z" },
    };
    const decided: RunEvent = {
      type: "confirmation.decided",
      data: { call_id: "a", decision: "reject", deadline_at: "2026-11-30T09:04:00.000001Z", decided_at: "2026-11-30T09:01:00.000000Z" },
    };
    const waiting = foldRun([queued, thought(1, ["a"]), asked]);
    expect(waiting.awaiting).toEqual({ kind: "confirmation", call_id: "a", since: "2026-11-30T09:00:02.000000Z" });
    expect(evolve(waiting, decided).confirmations).toEqual([{ call_id: "a", fingerprint: null, decision: "reject" }]);
  });

  it("given context.history, then the thread's history counts as loaded and nothing else changes", () => {
    const before = foldRun([queued, started("2026-11-30T09:00:01.000000Z")]);
    expect(before).toMatchObject({ thread_id: "thread-1", history_loaded: false });
    const history: RunEvent = {
      type: "context.history",
      data: { thread_id: "thread-1", turns: [], dropped: [], tokens: 0, budget_tokens: 8000 },
    };
    expect(evolve(before, history)).toEqual({ ...before, version: before.version + 1, history_loaded: true });
  });

  it("given an invocation run's results, then its outcome is the first answer that was not ok, else the latest; none outside invocations", () => {
    const calls = [
      { call_id: "invoke-1", tool_name: "focus_dataset", arguments: '{"dataset":"sales"}' },
      { call_id: "invoke-2", tool_name: "search", arguments: "{}" },
    ];
    const invoked: RunEvent = { type: "run.queued", data: { ...queued.data, invocation: { capability_id: "tool:search", calls } } } as RunEvent;
    const answer = (callId: string, tool: string, code: string, result: unknown): RunEvent => {
      const base = toolResult(callId, []);
      return { ...base, data: { ...(base.data as object), tool_name: tool, result_code: code, result } } as RunEvent;
    };
    const run = foldRun([invoked, started("2026-11-30T09:00:01.000000Z")]);
    expect(run).toMatchObject({ pending_calls: calls, invocation_outcome: null });
    const focused = evolve(run, answer("invoke-1", "focus_dataset", "ok", { focused: "sales" }));
    expect(focused.invocation_outcome).toEqual({ call_id: "invoke-1", tool_name: "focus_dataset", result_code: "ok", result: { focused: "sales" } });
    expect(evolve(focused, answer("invoke-2", "search", "ok", { rows: 2 })).invocation_outcome).toEqual({
      call_id: "invoke-2",
      tool_name: "search",
      result_code: "ok",
      result: { rows: 2 },
    });
    const failedFocus = evolve(run, answer("invoke-1", "focus_dataset", "60302", { error_code: "60302" }));
    expect(evolve(failedFocus, answer("invoke-2", "search", "ok", { rows: 2 })).invocation_outcome).toMatchObject({
      call_id: "invoke-1",
      result_code: "60302",
    });
    expect(foldRun([queued, thought(1, ["a"]), toolResult("a", [])]).invocation_outcome).toBeNull();
  });

  it("throws on an unknown event type", () => {
    const bogus = { type: "run.exploded", data: {} } as unknown as RunEvent;
    expect(() => evolve(initialRunState, bogus)).toThrow(/unknown run event run\.exploded/);
  });
});

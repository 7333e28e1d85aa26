import { RunErrorCode, ToolResultCode, foldRun, type RunEvent } from "@steward/contract";
import { decideInLoop, decideThrough, type Observation } from "./decider";
import type { HistoryData } from "./thread-history";
import { createdAt, deadline, ctx, late, queued, started, thought, sent, toolExecSays, answer, given, nothing, types } from "./decider.fixtures";

describe("the run decider: given the run's events, when something is observed, then events and the next I/O", () => {
  it("given a queued run, when nothing is observed, then run.started by this runner, and decide again", () => {
    const d = decideInLoop(given(), nothing, ctx);
    expect(d.events).toEqual([{ type: "run.started", data: { runner_id: "runner-7", started_at: "2026-11-30T09:01:00.000000Z" } }]);
    expect(d.effect).toEqual({ kind: "decide_again" });
  });

  it("given a started run with nothing pending, then ask the model for the next step", () => {
    expect(decideInLoop(given(started), nothing, ctx)).toEqual({ events: [], effect: { kind: "call_model", stepNo: 1 } });
    expect(decideThrough(given(), nothing, ctx)).toMatchObject({ events: [{ type: "run.started" }], effect: { kind: "call_model", stepNo: 1 } });
  });

  it("given a finished run, whatever is observed, then nothing and finished", () => {
    const done = given(started, { type: "run.failed", data: { error: { code: 60402, message: "" }, finished_at: deadline } });
    for (const observation of [nothing, { kind: "model_answer", stepNo: 1, answer: answer({ text: "hi" }) } as const]) {
      expect(decideInLoop(done, observation, ctx)).toEqual({ events: [], effect: { kind: "finished" } });
    }
  });

  it("when the model asks for tools, then its thought and the first call's marker go together, and the call is sent", () => {
    const toolCalls = [
      { id: "c1-0", name: "search", arguments: '{"q":1}' },
      { id: "c1-1", name: "search", arguments: '{"q":2}' },
    ];
    const d = decideThrough(given(started), { kind: "model_answer", stepNo: 1, answer: answer({ toolCalls, finishReason: "tool_calls" }) }, ctx);
    expect(types(d.events)).toEqual(["thought", "tool_call"]);
    expect(d.events[1]).toEqual(sent(1, "c1-0", "search", '{"q":1}'));
    expect(d.effect).toEqual({ kind: "invoke_tool", call: { call_id: "c1-0", tool_name: "search", arguments: '{"q":1}' }, exploration: false });
    expect(d.state.in_flight).toEqual(["c1-0"]);
  });

  it("when the model gives its final text, then the message and success; from a fallback profile, the fallback first", () => {
    const d = decideThrough(given(started), { kind: "model_answer", stepNo: 1, answer: answer({ text: "done", provider: "backup" }), primary: "primary" }, ctx);
    expect(types(d.events)).toEqual(["provider.fallback", "message", "run.succeeded"]);
    expect(d.events[0]).toEqual({ type: "provider.fallback", data: { step_no: 1, from: "primary", to: "backup" } });
    expect(d.effect).toEqual({ kind: "finished" });
  });

  it("when an answer arrives for a step the run has moved past, then it is not recorded again", () => {
    const moved = given(started, thought(1, ["search"]));
    const d = decideInLoop(moved, { kind: "model_answer", stepNo: 1, answer: answer({ text: "late" }) }, ctx);
    expect(d.events).toEqual([sent(1, "c1-0", "search")]);
  });

  it("when the model is unavailable, then hand the run back while deliveries remain, fail with 60300 on the last", () => {
    const run = given(started);
    expect(decideInLoop(run, { kind: "model_unavailable", stepNo: 1, lastDelivery: false, retryAfterMs: 700 }, ctx)).toEqual({
      events: [],
      effect: { kind: "retry_later", afterMs: 700 },
    });
    const last = decideThrough(run, { kind: "model_unavailable", stepNo: 1, lastDelivery: true }, ctx);
    expect(last.events).toMatchObject([{ type: "run.failed", data: { error: { code: RunErrorCode.modelUnavailable, step_no: 1 } } }]);
  });

  it("when the model is unavailable past the deadline, then the deadline ends the run (60402 at the step reached)", () => {
    const d = decideThrough(
      given(started, thought(1, ["search"]), sent(1, "c1-0", "search"), toolExecSays(1, "c1-0", "search")),
      {
        kind: "model_unavailable",
        stepNo: 2,
        lastDelivery: true,
      },
      late,
    );
    expect(d.events).toMatchObject([{ type: "run.failed", data: { error: { code: RunErrorCode.deadlinePassed, step_no: 1 } } }]);
  });

  it("when tool-exec answers, then the PDP's decision and the result; with more calls pending, the next one is sent in the same commit", () => {
    const run = given(started, thought(1, ["search"], ["search"]), sent(1, "c1-0", "search"));
    const d = decideThrough(run, { kind: "tool_outcome", result: toolExecSays(1, "c1-0", "search") }, ctx);
    expect(types(d.events)).toEqual(["tool.decided", "tool_result", "tool_call"]);
    expect(d.events[0]).toEqual({
      type: "tool.decided",
      data: {
        step_no: 1,
        call_id: "c1-0",
        tool_name: "search",
        policy_point: "search.point",
        fingerprint: "fp-c1-0",
        permit: true,
        code: "",
        policy_ids: ["p1"],
      },
    });
    expect(d.effect).toMatchObject({ kind: "invoke_tool", call: { call_id: "c1-1" } });
  });

  it("when tool-exec refuses the arguments, then no decision is recorded, only the result the model can correct", () => {
    const run = given(started, thought(1, ["search"]), sent(1, "c1-0", "search"));
    const d = decideInLoop(
      run,
      { kind: "tool_outcome", result: toolExecSays(1, "c1-0", "search", { permit: false, resultCode: ToolResultCode.invalidArguments }) },
      ctx,
    );
    expect(types(d.events)).toEqual(["tool_result"]);
  });

  it("when an AbortOnDeny tool is denied, then the run fails with the PDP's code; another tool's denial is only its result", () => {
    const run = given(started, thought(1, ["refund"]), sent(1, "c1-0", "refund"));
    const d = decideInLoop(
      run,
      { kind: "tool_outcome", result: toolExecSays(1, "c1-0", "refund", { permit: false, code: "60501", resultCode: "60501" }) },
      ctx,
    );
    expect(types(d.events)).toEqual(["tool.decided", "tool_result", "run.failed"]);
    expect(d.events[2]).toMatchObject({ data: { error: { code: 60501, tool_name: "refund", step_no: 1 } } });
    const other = given(started, thought(1, ["search"]), sent(1, "c1-0", "search"));
    const denied = decideInLoop(
      other,
      { kind: "tool_outcome", result: toolExecSays(1, "c1-0", "search", { permit: false, code: "60500", resultCode: "60500" }) },
      ctx,
    );
    expect(types(denied.events)).toEqual(["tool.decided", "tool_result"]);
  });

  it("when a cancel was requested while the tool ran, then the tool's result is recorded before run.cancelled", () => {
    const run = given(started, thought(1, ["send_mail"]), sent(1, "c1-0", "send_mail"), { type: "run.cancel_requested", data: { requested_at: createdAt } });
    const d = decideThrough(run, { kind: "tool_outcome", result: toolExecSays(1, "c1-0", "send_mail") }, ctx);
    expect(types(d.events)).toEqual(["tool.decided", "tool_result", "run.cancelled"]);
    expect(d.effect).toEqual({ kind: "finished" });
  });

  it("given a call found in flight, then an idempotent tool's call is sent again without a second marker; any other ends of unknown outcome", () => {
    const idempotent = given(started, thought(1, ["search"]), sent(1, "c1-0", "search"));
    expect(decideInLoop(idempotent, nothing, ctx)).toEqual({
      events: [],
      effect: { kind: "invoke_tool", call: { call_id: "c1-0", tool_name: "search", arguments: "{}" }, exploration: false },
    });
    const noRecord = given(started, thought(1, ["send_mail"]), sent(1, "c1-0", "send_mail"));
    const d = decideInLoop(noRecord, nothing, ctx);
    expect(d.events).toMatchObject([{ type: "tool_result", data: { call_id: "c1-0", result_code: ToolResultCode.outcomeUnknown, fingerprint: "" } }]);
    expect(d.effect).toEqual({ kind: "decide_again" });
  });

  it("given a marker of an earlier step with the same call id, then the call is not in flight", () => {
    const second = thought(2, ["send_mail"]);
    if (second.type !== "thought") throw new TypeError("a thought");
    const reusedId: RunEvent = { type: "thought", data: { ...second.data, tool_calls: [{ call_id: "c1-0", tool_name: "send_mail", arguments: "{}" }] } };
    const reused = given(started, thought(1, ["send_mail"]), sent(1, "c1-0", "send_mail"), toolExecSays(1, "c1-0", "send_mail"), reusedId);
    expect(decideInLoop(reused, nothing, ctx).events).toEqual([sent(2, "c1-0", "send_mail")]);
  });

  it("given a question to the user, then ask_user and wait; given a call that needs confirmation, then the request and wait", () => {
    const asking = given(started, thought(1, ["ask_user", '{"question":"Which account?"}']));
    const asked = decideInLoop(asking, nothing, ctx);
    expect(asked.events).toMatchObject([{ type: "ask_user", data: { call_id: "c1-0", question: "Which account?", options: [] } }]);
    expect(asked.effect).toEqual({ kind: "wait_for_user" });
    const confirming = given(started, thought(1, ["delete_all"]));
    const request = decideInLoop(confirming, nothing, ctx);
    expect(request.events).toMatchObject([{ type: "confirmation_required", data: { call_id: "c1-0", tool_name: "delete_all" } }]);
    expect(request.effect).toEqual({ kind: "wait_for_user" });
    // Still waiting: nothing to append.
    expect(decideInLoop(foldRun(request.events, confirming), nothing, ctx)).toEqual({ events: [], effect: { kind: "wait_for_user" } });
  });

  it("given an ask-mode run, when the model calls a write tool, then a refusal the model sees, and on", () => {
    const askMode = foldRun([{ ...queued, data: { ...(queued.data as object), mode: "ask" } } as RunEvent, started, thought(1, ["send_mail"])]);
    const d = decideThrough(askMode, nothing, ctx);
    expect(d.events).toMatchObject([{ type: "tool_result", data: { result_code: ToolResultCode.askModeDenied } }]);
    expect(d.effect).toEqual({ kind: "call_model", stepNo: 2 });
  });

  it("when the window was compacted, then context.compacted and the model is asked", () => {
    const d = decideInLoop(given(started), { kind: "compact", stepNo: 1, callIds: ["a"], tokensBefore: 900, tokensAfter: 400 }, ctx);
    expect(d).toEqual({
      events: [{ type: "context.compacted", data: { step_no: 1, call_ids: ["a"], tokens_before: 900, tokens_after: 400 } }],
      effect: { kind: "call_model", stepNo: 1 },
    });
  });

  it("given a run at its deadline, when nothing is observed, then 60402 at the step reached; a cancel request wins over it", () => {
    const run = given(started, thought(1, ["search"]), sent(1, "c1-0", "search"), toolExecSays(1, "c1-0", "search"));
    expect(decideInLoop(run, nothing, late).events).toMatchObject([{ type: "run.failed", data: { error: { code: RunErrorCode.deadlinePassed, step_no: 1 } } }]);
    const cancelled = foldRun([{ type: "run.cancel_requested", data: { requested_at: createdAt } }], run);
    expect(decideInLoop(cancelled, nothing, late).events).toMatchObject([{ type: "run.cancelled" }]);
  });
});

describe("a run in a thread: its earlier turns are loaded and recorded before its first model call", () => {
  const inThread: RunEvent = { ...queued, data: { ...(queued.data as object), thread_id: "thread-1" } } as RunEvent;
  const history: HistoryData = {
    thread_id: "thread-1",
    turns: [{ run_id: "r1", status: "succeeded", input: "earlier", answer: "said", steps: ["- step 1 search: ok {}"], steps_dropped: 0 }],
    dropped: [{ run_id: "r0", part: "turn", reason: "budget", steps: 0, tokens: 12 }],
    tokens: 20,
    budget_tokens: 100,
  };
  const loaded: Observation = { kind: "history_loaded", history };
  const recorded: RunEvent = { type: "context.history", data: history };

  it("given a queued run in a thread, then run.started and the history is loaded, not the model asked", () => {
    const d = decideThrough(foldRun([inThread]), nothing, ctx);
    expect(types(d.events)).toEqual(["run.started"]);
    expect(d.effect).toEqual({ kind: "load_history" });
  });

  it("when the history is loaded, then context.history is recorded alone, and then the model is asked for step 1", () => {
    const d = decideThrough(foldRun([inThread, started]), loaded, ctx);
    expect(d.events).toEqual([recorded]);
    expect(d.effect).toEqual({ kind: "call_model", stepNo: 1 });
    expect(d.state.history_loaded).toBe(true);
  });

  it("given a runner that died after loading and before recording, then the next holder loads again: the same order", () => {
    // Nothing of the load is in the events: the resumed run stands where it stood before the load.
    const resumed = foldRun([inThread, started]);
    expect(decideInLoop(resumed, nothing, ctx)).toEqual({ events: [], effect: { kind: "load_history" } });
    expect(decideThrough(resumed, loaded, ctx).events).toEqual([recorded]);
  });

  it("given the history recorded, then it is never loaded or recorded again (a reload, a resume after a question)", () => {
    const run = foldRun([inThread, started, recorded]);
    expect(decideInLoop(run, nothing, ctx)).toEqual({ events: [], effect: { kind: "call_model", stepNo: 1 } });
    expect(decideInLoop(run, loaded, ctx)).toEqual({ events: [], effect: { kind: "call_model", stepNo: 1 } });
  });

  it("given a cancel request before the load, then the run is cancelled without loading", () => {
    const run = foldRun([inThread, started, { type: "run.cancel_requested", data: { requested_at: createdAt } }]);
    expect(decideThrough(run, nothing, ctx).events).toMatchObject([{ type: "run.cancelled" }]);
  });

  it("given a run without a thread, then no history is loaded and a loaded one is not recorded", () => {
    expect(decideThrough(given(), nothing, ctx).effect).toEqual({ kind: "call_model", stepNo: 1 });
    expect(decideInLoop(given(started), loaded, ctx)).toEqual({ events: [], effect: { kind: "call_model", stepNo: 1 } });
  });
});

import { PayloadLimits, RunErrorCode, ToolResultCode, callFingerprint, canonicalJson, eventBytes, foldRun, parseMicros, type RunEvent, type ToolResult } from "@steward/contract";
import { decide, decideThrough, type DecideContext, type Observation } from "./decider";
import type { ModelAnswer } from "./model";
import type { HistoryData } from "./thread-history";
import { askUserTool, type ToolCatalog, type ToolInfo } from "./tool-catalog";

const createdAt = "2026-11-30T09:00:00.000000Z";
const deadline = "2026-11-30T09:03:00.000000Z";

const tool = (name: string, over: Partial<ToolInfo> = {}): ToolInfo => ({
  name,
  description: "",
  parameters: {},
  safety: "read",
  exploration: false,
  requireConfirmation: false,
  abortOnDeny: false,
  idempotent: true,
  policyPoint: `${name}.point`,
  states: [],
  builtIn: false,
  ...over,
});
const catalog: ToolCatalog = new Map([
  ["search", tool("search")],
  ["send_mail", tool("send_mail", { safety: "write", idempotent: false })],
  ["refund", tool("refund", { safety: "write", abortOnDeny: true })],
  ["delete_all", tool("delete_all", { safety: "write", requireConfirmation: true })],
  ["ask_user", askUserTool],
]);
const ctx: DecideContext = { now: parseMicros("2026-11-30T09:01:00.000000Z"), catalog, runnerId: "runner-7" };
const late: DecideContext = { ...ctx, now: parseMicros(deadline) };

const queued: RunEvent = {
  type: "run.queued",
  data: { input: "q", mode: "agent", response_language: null, created_by: "u", created_at: createdAt, deadline_at: deadline, thread_id: null },
};
const started: RunEvent = { type: "run.started", data: { runner_id: "r", started_at: createdAt } };
const usage = { input_tokens: 3, output_tokens: 2 };
const thought = (step: number, ...calls: Array<[tool: string, args?: string]>): RunEvent => ({
  type: "thought",
  data: {
    step_no: step,
    text: "",
    tool_calls: calls.map(([name, args], i) => ({ call_id: `c${step}-${i}`, tool_name: name, arguments: args ?? "{}" })),
    usage,
    provider: "primary",
  },
});
const sent = (step: number, callId: string, name: string, args = "{}"): RunEvent => ({
  type: "tool_call",
  data: { step_no: step, call_id: callId, tool_name: name, arguments: args },
});
const toolExecSays = (step: number, callId: string, name: string, over: { permit?: boolean; code?: string; resultCode?: string } = {}): ToolResult => ({
  type: "tool_result",
  data: {
    step_no: step,
    call_id: callId,
    tool_name: name,
    fingerprint: `fp-${callId}`,
    decision: { permit: over.permit ?? true, code: over.code ?? "", policy_ids: ["p1"] },
    result_code: over.resultCode ?? "ok",
    result: { rows: 1 },
    evidence: [],
  },
});
const answer = (over: Partial<ModelAnswer> = {}): ModelAnswer => ({ text: "", toolCalls: [], finishReason: "stop", usage, provider: "primary", ...over });
const given = (...events: RunEvent[]) => foldRun([queued, ...events]);
const nothing: Observation = { kind: "nothing" };
const types = (events: readonly RunEvent[]) => events.map((e) => e.type);

describe("the run decider: given the run's events, when something is observed, then events and the next I/O", () => {
  it("given a queued run, when nothing is observed, then run.started by this runner, and decide again", () => {
    const d = decide(given(), nothing, ctx);
    expect(d.events).toEqual([{ type: "run.started", data: { runner_id: "runner-7", started_at: "2026-11-30T09:01:00.000000Z" } }]);
    expect(d.effect).toEqual({ kind: "decide_again" });
  });

  it("given a started run with nothing pending, then ask the model for the next step", () => {
    expect(decide(given(started), nothing, ctx)).toEqual({ events: [], effect: { kind: "call_model", stepNo: 1 } });
    expect(decideThrough(given(), nothing, ctx)).toMatchObject({ events: [{ type: "run.started" }], effect: { kind: "call_model", stepNo: 1 } });
  });

  it("given a finished run, whatever is observed, then nothing and finished", () => {
    const done = given(started, { type: "run.failed", data: { error: { code: 60402, message: "" }, finished_at: deadline } });
    for (const observation of [nothing, { kind: "model_answer", stepNo: 1, answer: answer({ text: "hi" }) } as const]) {
      expect(decide(done, observation, ctx)).toEqual({ events: [], effect: { kind: "finished" } });
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
    const d = decide(moved, { kind: "model_answer", stepNo: 1, answer: answer({ text: "late" }) }, ctx);
    expect(d.events).toEqual([sent(1, "c1-0", "search")]);
  });

  it("when the model is unavailable, then hand the run back while deliveries remain, fail with 60300 on the last", () => {
    const run = given(started);
    expect(decide(run, { kind: "model_unavailable", stepNo: 1, lastDelivery: false, retryAfterMs: 700 }, ctx)).toEqual({
      events: [],
      effect: { kind: "retry_later", afterMs: 700 },
    });
    const last = decideThrough(run, { kind: "model_unavailable", stepNo: 1, lastDelivery: true }, ctx);
    expect(last.events).toMatchObject([{ type: "run.failed", data: { error: { code: RunErrorCode.modelUnavailable, step_no: 1 } } }]);
  });

  it("when the model is unavailable past the deadline, then the deadline ends the run (60402 at the step reached)", () => {
    const d = decideThrough(given(started, thought(1, ["search"]), sent(1, "c1-0", "search"), toolExecSays(1, "c1-0", "search")), {
      kind: "model_unavailable",
      stepNo: 2,
      lastDelivery: true,
    }, late);
    expect(d.events).toMatchObject([{ type: "run.failed", data: { error: { code: RunErrorCode.deadlinePassed, step_no: 1 } } }]);
  });

  it("when tool-exec answers, then the PDP's decision and the result; with more calls pending, the next one is sent in the same commit", () => {
    const run = given(started, thought(1, ["search"], ["search"]), sent(1, "c1-0", "search"));
    const d = decideThrough(run, { kind: "tool_outcome", result: toolExecSays(1, "c1-0", "search") }, ctx);
    expect(types(d.events)).toEqual(["tool.decided", "tool_result", "tool_call"]);
    expect(d.events[0]).toEqual({
      type: "tool.decided",
      data: { step_no: 1, call_id: "c1-0", tool_name: "search", policy_point: "search.point", fingerprint: "fp-c1-0", permit: true, code: "", policy_ids: ["p1"] },
    });
    expect(d.effect).toMatchObject({ kind: "invoke_tool", call: { call_id: "c1-1" } });
  });

  it("when tool-exec refuses the arguments, then no decision is recorded, only the result the model can correct", () => {
    const run = given(started, thought(1, ["search"]), sent(1, "c1-0", "search"));
    const d = decide(run, { kind: "tool_outcome", result: toolExecSays(1, "c1-0", "search", { permit: false, resultCode: ToolResultCode.invalidArguments }) }, ctx);
    expect(types(d.events)).toEqual(["tool_result"]);
  });

  it("when an AbortOnDeny tool is denied, then the run fails with the PDP's code; another tool's denial is only its result", () => {
    const run = given(started, thought(1, ["refund"]), sent(1, "c1-0", "refund"));
    const d = decide(run, { kind: "tool_outcome", result: toolExecSays(1, "c1-0", "refund", { permit: false, code: "60501", resultCode: "60501" }) }, ctx);
    expect(types(d.events)).toEqual(["tool.decided", "tool_result", "run.failed"]);
    expect(d.events[2]).toMatchObject({ data: { error: { code: 60501, tool_name: "refund", step_no: 1 } } });
    const other = given(started, thought(1, ["search"]), sent(1, "c1-0", "search"));
    const denied = decide(other, { kind: "tool_outcome", result: toolExecSays(1, "c1-0", "search", { permit: false, code: "60500", resultCode: "60500" }) }, ctx);
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
    expect(decide(idempotent, nothing, ctx)).toEqual({ events: [], effect: { kind: "invoke_tool", call: { call_id: "c1-0", tool_name: "search", arguments: "{}" }, exploration: false } });
    const noRecord = given(started, thought(1, ["send_mail"]), sent(1, "c1-0", "send_mail"));
    const d = decide(noRecord, nothing, ctx);
    expect(d.events).toMatchObject([{ type: "tool_result", data: { call_id: "c1-0", result_code: ToolResultCode.outcomeUnknown, fingerprint: "" } }]);
    expect(d.effect).toEqual({ kind: "decide_again" });
  });

  it("given a marker of an earlier step with the same call id, then the call is not in flight", () => {
    const second = thought(2, ["send_mail"]);
    if (second.type !== "thought") throw new TypeError("a thought");
    const reusedId: RunEvent = { type: "thought", data: { ...second.data, tool_calls: [{ call_id: "c1-0", tool_name: "send_mail", arguments: "{}" }] } };
    const reused = given(started, thought(1, ["send_mail"]), sent(1, "c1-0", "send_mail"), toolExecSays(1, "c1-0", "send_mail"), reusedId);
    expect(decide(reused, nothing, ctx).events).toEqual([sent(2, "c1-0", "send_mail")]);
  });

  it("given a question to the user, then ask_user and wait; given a call that needs confirmation, then the request and wait", () => {
    const asking = given(started, thought(1, ["ask_user", '{"question":"Which account?"}']));
    const asked = decide(asking, nothing, ctx);
    expect(asked.events).toMatchObject([{ type: "ask_user", data: { call_id: "c1-0", question: "Which account?", options: [] } }]);
    expect(asked.effect).toEqual({ kind: "wait_for_user" });
    const confirming = given(started, thought(1, ["delete_all"]));
    const request = decide(confirming, nothing, ctx);
    expect(request.events).toMatchObject([{ type: "confirmation_required", data: { call_id: "c1-0", tool_name: "delete_all" } }]);
    expect(request.effect).toEqual({ kind: "wait_for_user" });
    // Still waiting: nothing to append.
    expect(decide(foldRun(request.events, confirming), nothing, ctx)).toEqual({ events: [], effect: { kind: "wait_for_user" } });
  });

  it("given an ask-mode run, when the model calls a write tool, then a refusal the model sees, and on", () => {
    const askMode = foldRun([{ ...queued, data: { ...(queued.data as object), mode: "ask" } } as RunEvent, started, thought(1, ["send_mail"])]);
    const d = decideThrough(askMode, nothing, ctx);
    expect(d.events).toMatchObject([{ type: "tool_result", data: { result_code: ToolResultCode.askModeDenied } }]);
    expect(d.effect).toEqual({ kind: "call_model", stepNo: 2 });
  });

  it("when the window was compacted, then context.compacted and the model is asked", () => {
    const d = decide(given(started), { kind: "window_compacted", stepNo: 1, callIds: ["a"], tokensBefore: 900, tokensAfter: 400 }, ctx);
    expect(d).toEqual({
      events: [{ type: "context.compacted", data: { step_no: 1, call_ids: ["a"], tokens_before: 900, tokens_after: 400 } }],
      effect: { kind: "call_model", stepNo: 1 },
    });
  });

  it("given a run at its deadline, when nothing is observed, then 60402 at the step reached; a cancel request wins over it", () => {
    const run = given(started, thought(1, ["search"]), sent(1, "c1-0", "search"), toolExecSays(1, "c1-0", "search"));
    expect(decide(run, nothing, late).events).toMatchObject([{ type: "run.failed", data: { error: { code: RunErrorCode.deadlinePassed, step_no: 1 } } }]);
    const cancelled = foldRun([{ type: "run.cancel_requested", data: { requested_at: createdAt } }], run);
    expect(decide(cancelled, nothing, late).events).toMatchObject([{ type: "run.cancelled" }]);
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
    expect(decide(resumed, nothing, ctx)).toEqual({ events: [], effect: { kind: "load_history" } });
    expect(decideThrough(resumed, loaded, ctx).events).toEqual([recorded]);
  });

  it("given the history recorded, then it is never loaded or recorded again (a reload, a resume after a question)", () => {
    const run = foldRun([inThread, started, recorded]);
    expect(decide(run, nothing, ctx)).toEqual({ events: [], effect: { kind: "call_model", stepNo: 1 } });
    expect(decide(run, loaded, ctx)).toEqual({ events: [], effect: { kind: "call_model", stepNo: 1 } });
  });

  it("given a cancel request before the load, then the run is cancelled without loading", () => {
    const run = foldRun([inThread, started, { type: "run.cancel_requested", data: { requested_at: createdAt } }]);
    expect(decideThrough(run, nothing, ctx).events).toMatchObject([{ type: "run.cancelled" }]);
  });

  it("given a run without a thread, then no history is loaded and a loaded one is not recorded", () => {
    expect(decideThrough(given(), nothing, ctx).effect).toEqual({ kind: "call_model", stepNo: 1 });
    expect(decide(given(started), loaded, ctx)).toEqual({ events: [], effect: { kind: "call_model", stepNo: 1 } });
  });
});

describe("an invocation run: a capability invoked directly, its calls made without ever asking the model", () => {
  const invCatalog: ToolCatalog = new Map([
    ...catalog,
    ["focus_dataset", tool("focus_dataset")],
    ["dataset_query", tool("dataset_query", { states: ["dataset"] })],
  ]);
  const ictx: DecideContext = { ...ctx, catalog: invCatalog };
  const call = (n: number, name: string, args = "{}") => ({ call_id: `invoke-${n}`, tool_name: name, arguments: args });
  const queuedData = (queued as Extract<RunEvent, { type: "run.queued" }>).data;
  const invoked = (capability: string, ...calls: ReturnType<typeof call>[]): RunEvent => ({
    type: "run.queued",
    data: { ...queuedData, mcp_session_id: "s-1", mcp_mode: "execute", invocation: { capability_id: capability, calls } },
  });
  const search = invoked("tool:search", call(1, "search", '{"q":"refunds"}'));
  const answered = (callId: string, name: string, over: { permit?: boolean; code?: string; resultCode?: string; result?: unknown; nextState?: string } = {}): ToolResult => {
    const said = toolExecSays(0, callId, name, over);
    return { ...said, data: { ...said.data, result: over.result ?? said.data.result, ...(over.nextState ? { next_state: over.nextState } : {}) } };
  };
  const outcome = (capability_id: string, result_code: string, result: unknown) => canonicalJson({ capability_id, result_code, result });
  /** Drives a decision on, as the loop does, and keeps every effect it named: none may be the model. */
  const effects: string[] = [];
  const through = (events: readonly RunEvent[], observation: Observation, c: DecideContext = ictx) => {
    const d = decideThrough(foldRun(events), observation, c);
    effects.push(d.effect.kind);
    return d;
  };
  afterAll(() => {
    expect(effects.length).toBeGreaterThan(10);
    expect(effects).not.toContain("call_model");
    expect(effects).not.toContain("load_history");
  });

  it("given a queued invocation, then run.started and the marker of invoke-1 at step 0 go together, and the call is sent", () => {
    const d = through([search], nothing);
    expect(d.events).toEqual([
      { type: "run.started", data: { runner_id: "runner-7", started_at: "2026-11-30T09:01:00.000000Z" } },
      sent(0, "invoke-1", "search", '{"q":"refunds"}'),
    ]);
    expect(d.effect).toEqual({ kind: "invoke_tool", call: call(1, "search", '{"q":"refunds"}'), exploration: false });
    expect(d.state).toMatchObject({ step_no: 0, in_flight: ["invoke-1"], mcp_session_id: "s-1", mcp_mode: "execute" });
  });

  it("given an invocation in a thread, then no history is loaded: there is no model to show it to", () => {
    const inThread = { ...search, data: { ...(search.data as object), thread_id: "thread-1" } } as RunEvent;
    expect(through([inThread], nothing).effect).toMatchObject({ kind: "invoke_tool", call: { call_id: "invoke-1" } });
  });

  it("when its only call is answered ok, then the decision, the result and run.succeeded with the capability's outcome and the evidence", () => {
    const doc = { document_id: "d1", title: "Refunds", snippet: "30 days", score: 0.9 };
    const result = answered("invoke-1", "search", { result: { passages: 1 } });
    const withEvidence: ToolResult = { ...result, data: { ...result.data, evidence: [doc] } };
    const d = through([search, started, sent(0, "invoke-1", "search", '{"q":"refunds"}')], { kind: "tool_outcome", result: withEvidence });
    expect(types(d.events)).toEqual(["tool.decided", "tool_result", "run.succeeded"]);
    expect(d.events[2]).toEqual({
      type: "run.succeeded",
      data: { output: { text: outcome("tool:search", "ok", { passages: 1 }), evidence: [doc] }, finished_at: "2026-11-30T09:01:00.000000Z" },
    });
    expect(d.effect).toEqual({ kind: "finished" });
    expect(d.state.usage.model_calls).toBe(0);
  });

  it("given an outcome too large to repeat in the output, then the output names the call whose tool_result holds it, and fits", () => {
    // Quotes double when the result is escaped into the output's text: a result that fit its tool_result would not fit.
    const big = { rows: Array.from({ length: 9_000 }, () => '"q"'.repeat(3)) };
    const d = through([search, started, sent(0, "invoke-1", "search", '{"q":"refunds"}')], { kind: "tool_outcome", result: answered("invoke-1", "search", { result: big }) });
    const done = d.events[2];
    expect(done.type).toBe("run.succeeded");
    expect(eventBytes(d.events[1])).toBeLessThan(PayloadLimits.eventBytes);
    expect(eventBytes(done)).toBeLessThanOrEqual(PayloadLimits.eventBytes);
    expect(JSON.parse(d.state.output!.text)).toEqual({
      capability_id: "tool:search",
      result_code: "ok",
      result: { result_cut: { note: expect.stringContaining("tool_result"), call_id: "invoke-1" } },
    });
  });

  it("when a call is denied, then the run fails with the deny code (as for an AbortOnDeny tool) and the next call is never sent", () => {
    const two = invoked("tool:send_mail", call(1, "search"), call(2, "send_mail"));
    const d = through([two, started, sent(0, "invoke-1", "search")], {
      kind: "tool_outcome",
      result: answered("invoke-1", "search", { permit: false, code: "60501", resultCode: "60501", result: { error_code: "60501" } }),
    });
    expect(types(d.events)).toEqual(["tool.decided", "tool_result", "run.failed"]);
    expect(d.events[2]).toMatchObject({ data: { error: { code: 60501, tool_name: "search", step_no: 0 } } });
    expect(d.events.some((e) => e.type === "tool_call" && e.data.call_id === "invoke-2")).toBe(false);
    expect(d.effect).toEqual({ kind: "finished" });
    // A deny without a code of its own fails with 60500; arguments tool-exec refused asked no PDP: an outcome, not a deny.
    const plain = through([search, started, sent(0, "invoke-1", "search")], { kind: "tool_outcome", result: answered("invoke-1", "search", { permit: false, code: "" }) });
    expect(plain.events[2]).toMatchObject({ type: "run.failed", data: { error: { code: RunErrorCode.policyDenied } } });
    const refused = answered("invoke-1", "search", { permit: false, resultCode: ToolResultCode.invalidArguments, result: { error_code: ToolResultCode.invalidArguments } });
    const bad = through([search, started, sent(0, "invoke-1", "search")], { kind: "tool_outcome", result: refused });
    expect(types(bad.events)).toEqual(["tool_result", "run.succeeded"]);
    expect(bad.state.output?.text).toBe(outcome("tool:search", ToolResultCode.invalidArguments, { error_code: ToolResultCode.invalidArguments }));
  });

  it("given a write that needs confirmation, then the request and wait; approved, then it is sent; rejected, then success with REJECTED_BY_USER", () => {
    const args = '{"scope":"drafts"}';
    const confirm = invoked("tool:delete_all", call(1, "delete_all", args));
    const asked = through([confirm], nothing);
    expect(types(asked.events)).toEqual(["run.started", "confirmation_required"]);
    expect(asked.events[1]).toMatchObject({ data: { step_no: 0, call_id: "invoke-1", tool_name: "delete_all", arguments: args, fingerprint: callFingerprint(0, "delete_all", args) } });
    expect(asked.effect).toEqual({ kind: "wait_for_user" });
    const request = asked.events[1];
    if (request.type !== "confirmation_required") throw new TypeError("a confirmation request");
    const decided = (decision: "approve" | "reject"): RunEvent => ({
      type: "confirmation.decided",
      data: { call_id: "invoke-1", decision, deadline_at: deadline, decided_at: createdAt, fingerprint: request.data.fingerprint },
    });
    const approved = through([confirm, ...asked.events, decided("approve")], nothing);
    expect(approved.events).toEqual([sent(0, "invoke-1", "delete_all", args)]);
    expect(approved.effect).toMatchObject({ kind: "invoke_tool", call: { call_id: "invoke-1" } });
    const rejected = through([confirm, ...asked.events, decided("reject")], nothing);
    expect(types(rejected.events)).toEqual(["tool_result", "run.succeeded"]);
    expect(rejected.state).toMatchObject({ status: "succeeded", usage: { tool_calls: 1, model_calls: 0 } });
    expect(JSON.parse(rejected.state.output!.text)).toEqual({
      capability_id: "tool:delete_all",
      result_code: ToolResultCode.rejectedByUser,
      result: { error_code: ToolResultCode.rejectedByUser, note: "the user rejected this call; do not repeat it" },
    });
  });

  it("given a dataset-bound capability, then the focus runs first, the target in the focused state, and the target's result is the outcome", () => {
    const bound = invoked("tool:dataset_query", call(1, "focus_dataset", '{"dataset":"sales"}'), call(2, "dataset_query", '{"sql":"select 1"}'));
    const history: RunEvent[] = [bound, ...through([bound], nothing).events];
    expect(history.slice(1)).toEqual([expect.objectContaining({ type: "run.started" }), sent(0, "invoke-1", "focus_dataset", '{"dataset":"sales"}')]);
    const focused = through(history, { kind: "tool_outcome", result: answered("invoke-1", "focus_dataset", { result: { dataset: "sales" }, nextState: "dataset" }) });
    expect(types(focused.events)).toEqual(["tool.decided", "tool_result", "tool_call"]);
    expect(focused.effect).toMatchObject({ kind: "invoke_tool", call: { call_id: "invoke-2", tool_name: "dataset_query" } });
    history.push(...focused.events);
    const done = through(history, { kind: "tool_outcome", result: answered("invoke-2", "dataset_query", { result: { rows: [[1]] } }) });
    expect(types(done.events)).toEqual(["tool.decided", "tool_result", "run.succeeded"]);
    expect(done.state.output?.text).toBe(outcome("tool:dataset_query", "ok", { rows: [[1]] }));
    expect(done.state.step_no).toBe(0);
  });

  it("given a focus that failed, then the target is not offered (refused, never sent) and the focus's failure is the outcome", () => {
    const bound = invoked("tool:dataset_query", call(1, "focus_dataset", '{"dataset":"gone"}'), call(2, "dataset_query"));
    const failed = answered("invoke-1", "focus_dataset", { resultCode: ToolResultCode.toolFailed, result: { error_code: ToolResultCode.toolFailed } });
    const d = through([bound, started, sent(0, "invoke-1", "focus_dataset", '{"dataset":"gone"}')], { kind: "tool_outcome", result: failed });
    expect(types(d.events)).toEqual(["tool.decided", "tool_result", "tool_result", "run.succeeded"]);
    expect(d.events[2]).toMatchObject({ data: { call_id: "invoke-2", result_code: ToolResultCode.toolNotAvailable } });
    expect(d.state.output?.text).toBe(outcome("tool:dataset_query", ToolResultCode.toolFailed, { error_code: ToolResultCode.toolFailed }));
  });

  it("given a call found in flight after a crash, then an idempotent tool's call is sent again; any other ends of unknown outcome, and the run with it", () => {
    const again = through([search, started, sent(0, "invoke-1", "search", '{"q":"refunds"}')], nothing);
    expect(again.events).toEqual([]);
    expect(again.effect).toEqual({ kind: "invoke_tool", call: call(1, "search", '{"q":"refunds"}'), exploration: false });
    const mail = invoked("tool:send_mail", call(1, "send_mail"));
    const unknown = through([mail, started, sent(0, "invoke-1", "send_mail")], nothing);
    expect(types(unknown.events)).toEqual(["tool_result", "run.succeeded"]);
    expect(unknown.events[0]).toMatchObject({ data: { call_id: "invoke-1", result_code: ToolResultCode.outcomeUnknown, fingerprint: "" } });
    expect(JSON.parse(unknown.state.output!.text)).toMatchObject({ capability_id: "tool:send_mail", result_code: ToolResultCode.outcomeUnknown });
    expect(unknown.effect).toEqual({ kind: "finished" });
  });

  it("given a cancel request, then run.cancelled: before the start, or after the result of the call in hand (the next call never sent)", () => {
    const cancel: RunEvent = { type: "run.cancel_requested", data: { requested_at: createdAt } };
    expect(types(through([search, cancel], nothing).events)).toEqual(["run.cancelled"]);
    const two = invoked("tool:send_mail", call(1, "search"), call(2, "send_mail"));
    const d = through([two, started, sent(0, "invoke-1", "search"), cancel], { kind: "tool_outcome", result: answered("invoke-1", "search") });
    expect(types(d.events)).toEqual(["tool.decided", "tool_result", "run.cancelled"]);
    expect(d.effect).toEqual({ kind: "finished" });
  });

  it("given an invocation at its deadline, then 60402 at step 0, as for any run", () => {
    const d = through([search, started, sent(0, "invoke-1", "search")], nothing, { ...late, catalog: invCatalog });
    expect(d.events).toMatchObject([{ type: "run.failed", data: { error: { code: RunErrorCode.deadlinePassed, step_no: 0 } } }]);
  });
});

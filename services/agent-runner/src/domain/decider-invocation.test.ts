import {
  PayloadLimits,
  RunErrorCode,
  ToolResultCode,
  callFingerprint,
  canonicalJson,
  eventBytes,
  foldRun,
  type RunEvent,
  type ToolResult,
} from "@steward/contract";
import { decideThrough, type DecideContext, type Observation } from "./decider";
import { type ToolCatalog } from "./tool-catalog";
import { createdAt, deadline, tool, catalog, ctx, late, queued, started, sent, toolExecSays, nothing, types } from "./decider.fixtures";

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
  const answered = (
    callId: string,
    name: string,
    over: { permit?: boolean; code?: string; resultCode?: string; result?: unknown; nextState?: string } = {},
  ): ToolResult => {
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
    const d = through([search, started, sent(0, "invoke-1", "search", '{"q":"refunds"}')], {
      kind: "tool_outcome",
      result: answered("invoke-1", "search", { result: big }),
    });
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
    const plain = through([search, started, sent(0, "invoke-1", "search")], {
      kind: "tool_outcome",
      result: answered("invoke-1", "search", { permit: false, code: "" }),
    });
    expect(plain.events[2]).toMatchObject({ type: "run.failed", data: { error: { code: RunErrorCode.policyDenied } } });
    const refused = answered("invoke-1", "search", {
      permit: false,
      resultCode: ToolResultCode.invalidArguments,
      result: { error_code: ToolResultCode.invalidArguments },
    });
    const bad = through([search, started, sent(0, "invoke-1", "search")], { kind: "tool_outcome", result: refused });
    expect(types(bad.events)).toEqual(["tool_result", "run.succeeded"]);
    expect(bad.state.output?.text).toBe(outcome("tool:search", ToolResultCode.invalidArguments, { error_code: ToolResultCode.invalidArguments }));
  });

  it("given a write that needs confirmation, then the request and wait; approved, then it is sent; rejected, then success with REJECTED_BY_USER", () => {
    const args = '{"scope":"drafts"}';
    const confirm = invoked("tool:delete_all", call(1, "delete_all", args));
    const asked = through([confirm], nothing);
    expect(types(asked.events)).toEqual(["run.started", "confirmation_required"]);
    expect(asked.events[1]).toMatchObject({
      data: { step_no: 0, call_id: "invoke-1", tool_name: "delete_all", arguments: args, fingerprint: callFingerprint(0, "delete_all", args) },
    });
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
    const focused = through(history, {
      kind: "tool_outcome",
      result: answered("invoke-1", "focus_dataset", { result: { dataset: "sales" }, nextState: "dataset" }),
    });
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

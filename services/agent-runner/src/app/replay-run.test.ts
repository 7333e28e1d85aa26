import { addSeconds, callFingerprint, canonicalJson, type Evidence, type RunError, type RunEvent, type StoredRunEvent } from "@steward/contract";
import { conversationOf } from "../domain/conversation";
import { replayRun } from "./replay-run";

const runId = "5f0c1a8e-0000-4000-8000-000000000001";
const createdAt = "2026-11-30T09:00:00.000000Z";
const deadline = addSeconds(createdAt, 180);
const doc: Evidence = { document_id: "d1", title: "Refund policy", snippet: "30 days", score: 0.9 };

/** A recorded stream: seq 1..n, one event per second after created_at unless `at` says otherwise. */
function recorded(events: RunEvent[], at: (i: number) => string = (i) => addSeconds(createdAt, i)): StoredRunEvent[] {
  return events.map((e, i) => ({
    ...e,
    metadata: { event_id: `e${i + 1}`, run_id: runId, tenant_id: "acme", seq: i + 1, recorded_at: at(i) },
  })) as StoredRunEvent[];
}

const queued: RunEvent = {
  type: "run.queued",
  data: { input: "refunds?", mode: "agent", response_language: null, created_by: "alice", created_at: createdAt, deadline_at: deadline, thread_id: null },
};
const started: RunEvent = { type: "run.started", data: { runner_id: "runner-1", started_at: addSeconds(createdAt, 1) } };
const usage = { input_tokens: 10, output_tokens: 5 };
const thought = (step: number, tool = "knowledge_search", args = `{"query":"q${step}"}`): RunEvent => ({
  type: "thought",
  data: { step_no: step, text: "searching", tool_calls: [{ call_id: `call_${step}`, tool_name: tool, arguments: args }], usage, provider: "scripted" },
});
const toolCall = (step: number, tool = "knowledge_search", args = `{"query":"q${step}"}`): RunEvent => ({
  type: "tool_call",
  data: { step_no: step, call_id: `call_${step}`, tool_name: tool, arguments: args },
});
const toolResult = (step: number, over: { fingerprint?: string; code?: string; evidence?: Evidence[]; tool?: string; permit?: boolean } = {}): RunEvent => ({
  type: "tool_result",
  data: {
    step_no: step,
    call_id: `call_${step}`,
    tool_name: over.tool ?? "knowledge_search",
    fingerprint: over.fingerprint ?? `fp${step}`,
    decision: { permit: over.permit ?? true, code: over.permit === false ? "60500" : "", policy_ids: [] },
    result_code: over.code ?? "ok",
    result: { passages: [] },
    evidence: over.evidence ?? [],
  },
});
const message = (step: number, text = "Refunds within 30 days."): RunEvent => ({
  type: "message",
  data: { step_no: step, text, usage, provider: "scripted" },
});
const succeeded = (text = "Refunds within 30 days.", evidence: Evidence[] = [doc]): RunEvent => ({
  type: "run.succeeded",
  data: { output: { text, evidence }, finished_at: addSeconds(createdAt, 30) },
});
const failed = (error: RunError): RunEvent => ({ type: "run.failed", data: { error, finished_at: addSeconds(createdAt, 30) } });

/** The PDP's decision the runner records beside a result: the result's own decision and fingerprint. */
const decided = (result: RunEvent, policyPoint = "knowledge.document.read"): RunEvent => {
  if (result.type !== "tool_result") throw new TypeError("a decision goes with a tool_result");
  const { step_no, call_id, tool_name, fingerprint, decision } = result.data;
  return { type: "tool.decided", data: { step_no, call_id, tool_name, policy_point: policyPoint, fingerprint, ...decision } };
};

/** A tool step of the loop: the thought asking for it, the call, the PDP's decision and the result. */
const toolStep = (step: number, over: Parameters<typeof toolResult>[1] = {}): RunEvent[] => {
  const result = toolResult(step, over);
  return [thought(step), toolCall(step), decided(result), result];
};

const happy = (): RunEvent[] => [queued, started, ...toolStep(1, { evidence: [doc] }), message(2), succeeded()];

/** Replaces the event at `seq` (1-based). */
function tamper(events: RunEvent[], seq: number, change: (e: any) => RunEvent): RunEvent[] {
  return events.map((e, i) => (i + 1 === seq ? change(structuredClone(e)) : e));
}

describe("replayRun", () => {
  it("given a recorded search-then-answer run, then the replay reaches the same final state", () => {
    const report = replayRun(recorded(happy()));
    expect(report).toMatchObject({ runId, recordedEvents: 8, replayedEvents: 8, finished: true, sameFinalState: true, divergence: undefined });
    expect(report.replayedState).toMatchObject({ status: "succeeded", step_no: 2, usage: { model_calls: 2, tool_calls: 1 } });
  });

  it("given a tampered run.succeeded output, then DIVERGED at its seq", () => {
    for (const change of [(e: any) => ((e.data.output.text = "Refunds within 90 days."), e), (e: any) => ((e.data.output.evidence = []), e)]) {
      const report = replayRun(recorded(tamper(happy(), 8, change)));
      expect(report.sameFinalState).toBe(false);
      expect(report.divergence).toMatchObject({ seq: 8 });
      expect(report.divergence!.expected).toMatch(/^run\.succeeded/);
    }
  });

  it("given a stream whose tool_result is missing, then DIVERGED where the result was due", () => {
    const events = happy().filter((e) => e.type !== "tool_result");
    const report = replayRun(recorded(events));
    expect(report.sameFinalState).toBe(false);
    expect(report.divergence).toMatchObject({ seq: 6, expected: "tool_result of call call_1" });
    expect(report.divergence!.actual).toMatch(/^message/);
  });

  it("given a tool result recorded for another step, then DIVERGED at the result", () => {
    const report = replayRun(recorded(tamper(happy(), 6, (e) => ((e.data.step_no = 2), e))));
    expect(report.divergence).toMatchObject({ seq: 6 });
  });

  it("given a recorded decision that contradicts the result, then DIVERGED at the decision", () => {
    const report = replayRun(recorded(tamper(happy(), 5, (e) => ((e.data.permit = false), e))));
    expect(report.divergence).toMatchObject({ seq: 5 });
    expect(report.divergence!.expected).toMatch(/^tool\.decided/);
  });

  it("given a recording made before decisions were recorded, or a result for refused arguments, then same", () => {
    expect(replayRun(recorded(happy().filter((e) => e.type !== "tool.decided")))).toMatchObject({ sameFinalState: true, replayedEvents: 7 });
    const refused = toolResult(1, { code: "INVALID_ARGUMENTS", fingerprint: "" });
    const events = [queued, started, thought(1), toolCall(1), refused, message(2), succeeded("Refunds within 30 days.", [])];
    expect(replayRun(recorded(events))).toMatchObject({ sameFinalState: true });
    // For refused arguments the runner records no decision.
    const withDecision = [...events.slice(0, 4), decided(refused), ...events.slice(4)];
    expect(replayRun(recorded(withDecision)).divergence).toMatchObject({ seq: 5 });
  });

  it("given results carrying tool-exec's timings, then same: they are what the call observed, fed back as recorded, and never shown to the model", () => {
    const timed = (step: number, timings: { decision_ms: number; tool_ms: number }): RunEvent[] => {
      const result = toolResult(step, { evidence: [doc] });
      if (result.type !== "tool_result") throw new TypeError("a tool_result");
      const withTimings: RunEvent = { ...result, data: { ...result.data, timings } };
      return [thought(step), toolCall(step), decided(withTimings), withTimings];
    };
    // A slow PDP on the first call, a slow tool on the second; a run recorded before timings mixes in as well.
    const events = recorded([
      queued,
      started,
      ...timed(1, { decision_ms: 1840, tool_ms: 12 }),
      ...timed(2, { decision_ms: 3, tool_ms: 2210 }),
      ...toolStep(3),
      message(4),
      succeeded(),
    ]);
    const report = replayRun(events);
    expect(report).toMatchObject({ recordedEvents: events.length, replayedEvents: events.length, finished: true, sameFinalState: true, divergence: undefined });
    expect(report.replayedState).toMatchObject({ status: "succeeded", usage: { tool_calls: 3 } });
    // The model's conversation is built from the events alone: the timings are not part of it.
    const conversation = JSON.stringify(conversationOf(events));
    expect(conversation).toContain("passages");
    expect(conversation).not.toMatch(/timings|decision_ms|tool_ms|1840|2210/);
  });

  it("given events after the end, then DIVERGED at the first of them", () => {
    const report = replayRun(recorded([...happy(), toolCall(3)]));
    expect(report).toMatchObject({ sameFinalState: false, divergence: { seq: 9, expected: "the end of the stream" } });
  });

  it("given an unknown tool failed with 60200, then same; with another code recorded, then DIVERGED", () => {
    const events = [queued, started, thought(1, "rm_rf", "{}"), failed({ code: 60200, message: "unknown", tool_name: "rm_rf", step_no: 1 })];
    expect(replayRun(recorded(events))).toMatchObject({ sameFinalState: true });
    const changed = replayRun(recorded(tamper(events, 4, (e) => ((e.data.error.code = 60302), e))));
    expect(changed.divergence).toMatchObject({ seq: 4 });
    expect(changed.divergence!.expected).toMatch(/^tool_call/);
  });

  it("given three identical fingerprints, then the recorded 60400 reproduces; another cycle length does not", () => {
    const events = [queued, started, ...[1, 2, 3].flatMap((s) => toolStep(s, { fingerprint: "same" }))];
    const cycle = failed({ code: 60400, message: "cycle", tool_name: "knowledge_search", cycle_length: 1, step_no: 3 });
    expect(replayRun(recorded([...events, cycle]))).toMatchObject({ sameFinalState: true, replayedEvents: 15 });
    const wrongLength = replayRun(recorded(tamper([...events, cycle], 15, (e) => ((e.data.error.cycle_length = 2), e))));
    expect(wrongLength.divergence).toMatchObject({ seq: 15 });
    const wrongCode = replayRun(recorded(tamper([...events, cycle], 15, (e) => ((e.data.error.code = 60401), e))));
    expect(wrongCode.divergence).toMatchObject({ seq: 15 });
  });

  it("given 25 steps, then the recorded 60401 reproduces; a 26th model call does not", () => {
    const steps = Array.from({ length: 25 }, (_, i) => toolStep(i + 1)).flat();
    const budget = failed({ code: 60401, message: "budget", step_no: 25 });
    expect(replayRun(recorded([queued, started, ...steps, budget]))).toMatchObject({ sameFinalState: true });
    const report = replayRun(recorded([queued, started, ...steps, message(26), succeeded("Refunds within 30 days.", [])]));
    expect(report.divergence).toMatchObject({ seq: 103 });
  });

  it("given three failures of one tool, then the circuit opens and the next call is short-circuited", () => {
    const events = [
      queued,
      started,
      ...[1, 2, 3].flatMap((s) => toolStep(s, { code: "60302" })),
      { type: "circuit.opened", data: { step_no: 3, tool_name: "knowledge_search", failures: 3 } } as RunEvent,
      thought(4),
      {
        type: "tool_result",
        data: {
          step_no: 4,
          call_id: "call_4",
          tool_name: "knowledge_search",
          fingerprint: "",
          result_code: "60403",
          evidence: [],
          decision: { permit: false, code: "", policy_ids: [] },
          result: { error_code: "60403", note: "this tool failed repeatedly and is disabled for the rest of the run" },
        },
      } as RunEvent,
      message(5),
      succeeded("Refunds within 30 days.", []),
    ];
    expect(replayRun(recorded(events))).toMatchObject({ sameFinalState: true, replayedEvents: 19 });
    const report = replayRun(recorded(tamper(events, 15, (e) => ((e.data.failures = 2), e))));
    expect(report.divergence).toMatchObject({ seq: 15 });
  });

  it("given an AbortOnDeny tool denied, then the recorded failure with the PDP's code reproduces", () => {
    const denied = toolResult(1, { tool: "delete_document", permit: false, code: "60500" });
    const events = [
      queued,
      started,
      thought(1, "delete_document", "{}"),
      toolCall(1, "delete_document", "{}"),
      decided(denied, "knowledge.document.delete"),
      denied,
      failed({ code: 60500, message: "denied", tool_name: "delete_document", step_no: 1 }),
    ];
    expect(replayRun(recorded(events))).toMatchObject({ sameFinalState: true, replayedEvents: 7 });
    const report = replayRun(recorded(tamper(events, 7, (e) => ((e.data.error.tool_name = "other"), e))));
    expect(report.divergence).toMatchObject({ seq: 7 });
  });

  it("given the model unavailable on the last delivery, then the recorded 60300 reproduces", () => {
    const events = [queued, started, failed({ code: 60300, message: "unavailable", step_no: 1 })];
    expect(replayRun(recorded(events))).toMatchObject({ sameFinalState: true });
    expect(replayRun(recorded(tamper(events, 3, (e) => ((e.data.error.step_no = 2), e)))).divergence).toMatchObject({ seq: 3 });
  });

  it("given the reaper's 60402 after the deadline, even between a tool call and its result, then same", () => {
    const events = [queued, started, thought(1), toolCall(1), failed({ code: 60402, message: "deadline", step_no: 1 })];
    const times = (i: number) => (i < 4 ? addSeconds(createdAt, i) : addSeconds(deadline, 1));
    expect(replayRun(recorded(events, times))).toMatchObject({ sameFinalState: true, replayedEvents: 5 });
    // The same failure recorded before the deadline was not the deadline's doing.
    expect(replayRun(recorded(events)).divergence).toMatchObject({ seq: 5 });
  });

  it("given a model answer recorded just after the deadline, then it is accepted and the 60402 that followed reproduces", () => {
    const events = [queued, started, thought(1), failed({ code: 60402, message: "deadline" })];
    const times = (i: number) => (i < 2 ? addSeconds(createdAt, i) : addSeconds(deadline, i));
    expect(replayRun(recorded(events, times))).toMatchObject({ sameFinalState: true, replayedEvents: 4 });
  });

  it("given a cancel request between steps, inside a tool step or before the start, then the recorded run.cancelled reproduces", () => {
    const requested: RunEvent = { type: "run.cancel_requested", data: { requested_at: addSeconds(createdAt, 8) } };
    const cancelled: RunEvent = { type: "run.cancelled", data: { error: { code: 60405, message: "cancelled" }, finished_at: addSeconds(createdAt, 9) } };
    expect(replayRun(recorded([queued, started, ...toolStep(1), requested, cancelled]))).toMatchObject({ sameFinalState: true });
    expect(replayRun(recorded([queued, started, thought(1), toolCall(1), requested, cancelled]))).toMatchObject({ sameFinalState: true });
    expect(replayRun(recorded([queued, requested, cancelled]))).toMatchObject({ sameFinalState: true, replayedEvents: 3 });
    // Nobody asked: the loop would not have cancelled.
    expect(replayRun(recorded([queued, started, ...toolStep(1), cancelled])).divergence).toMatchObject({ seq: 7 });
  });

  it("given a question to the user and the answer, then the answer is given to the model as the call's result", () => {
    const ask = thought(1, "ask_user", '{"question":"Which year?","options":["2025","2026"]}');
    const asked: RunEvent = {
      type: "ask_user",
      data: { step_no: 1, call_id: "call_1", question: "Which year?", options: ["2025", "2026"], asked_at: addSeconds(createdAt, 3) },
    };
    const answered: RunEvent = {
      type: "input.received",
      data: { call_id: "call_1", answer: "2026", deadline_at: addSeconds(deadline, 60), answered_at: addSeconds(createdAt, 63) },
    };
    const given = (answer: string): RunEvent => ({
      type: "tool_result",
      data: {
        step_no: 1,
        call_id: "call_1",
        tool_name: "ask_user",
        fingerprint: "",
        result_code: "ok",
        result: { answer },
        evidence: [],
        decision: { permit: false, code: "", policy_ids: [] },
      },
    });
    const events = [queued, started, ask, asked, answered, given("2026"), message(2), succeeded("Refunds within 30 days.", [])];
    expect(replayRun(recorded(events))).toMatchObject({ sameFinalState: true, replayedEvents: 8 });
    expect(replayRun(recorded(events.slice(0, 4)))).toMatchObject({ finished: false, divergence: undefined, replayedEvents: 4 });
    expect(replayRun(recorded([...events.slice(0, 4), failed({ code: 60406, message: "unanswered", step_no: 1 })]))).toMatchObject({ sameFinalState: true });
    expect(replayRun(recorded(tamper(events, 6, () => given("2025")))).divergence).toMatchObject({ seq: 6 });
    // A result while the run still waits for the user was not the loop's doing.
    expect(replayRun(recorded([...events.slice(0, 4), given("2026")])).divergence).toMatchObject({ seq: 5 });
  });

  describe("the other writers' events, each checked against the run decider's decision on their command", () => {
    const ask = thought(1, "ask_user", '{"question":"Which year?"}');
    const asked: RunEvent = {
      type: "ask_user",
      data: { step_no: 1, call_id: "call_1", question: "Which year?", options: [], asked_at: addSeconds(createdAt, 3) },
    };
    const answered = (deadlineAt: string): RunEvent => ({
      type: "input.received",
      data: { call_id: "call_1", answer: "2026", deadline_at: deadlineAt, answered_at: addSeconds(createdAt, 63) },
    });

    it("given run.queued whose deadline is not whole seconds after its creation, then DIVERGED at seq 1", () => {
      const odd: RunEvent = { ...queued, data: { ...(queued.data as object), deadline_at: "2026-11-30T09:03:00.500000Z" } } as RunEvent;
      expect(replayRun(recorded([odd, started])).divergence).toMatchObject({ seq: 1, expected: expect.stringMatching(/^run.queued/) });
    });

    it("given an answer whose deadline did not move by the wait, then DIVERGED at the answer", () => {
      const report = replayRun(recorded([queued, started, ask, asked, answered(deadline)]));
      expect(report.divergence).toMatchObject({ seq: 5, expected: expect.stringContaining(addSeconds(deadline, 60)) });
      expect(replayRun(recorded([queued, started, ask, asked, answered(addSeconds(deadline, 60))])).divergence).toBeUndefined();
    });

    it("given an answer or a decision while the run waits for neither, then DIVERGED: the gateway refuses it", () => {
      const report = replayRun(recorded([queued, started, answered(deadline)]));
      expect(report.divergence).toMatchObject({ seq: 3, expected: expect.stringContaining("not waiting for an answer") });
      const decision: RunEvent = {
        type: "confirmation.decided",
        data: { call_id: "call_1", decision: "approve", deadline_at: deadline, decided_at: addSeconds(createdAt, 5) },
      };
      expect(replayRun(recorded([queued, started, ask, asked, decision])).divergence).toMatchObject({ seq: 5 });
    });

    it("given a queued run's cancel recorded without its run.cancelled, then DIVERGED where the cancel ends it", () => {
      const requested: RunEvent = { type: "run.cancel_requested", data: { requested_at: addSeconds(createdAt, 1) } };
      const report = replayRun(recorded([queued, requested, started]));
      expect(report.divergence).toMatchObject({ seq: 3, expected: expect.stringMatching(/^run.cancelled/) });
    });

    it("given the reaper's 60406 while the run does not wait for the user, then DIVERGED at it", () => {
      const report = replayRun(recorded([queued, started, failed({ code: 60406, message: "unanswered", step_no: 0 })]));
      expect(report.divergence).toMatchObject({ seq: 3 });
    });
  });

  it("given a tool that needed confirmation, then it runs only after an approval", () => {
    const args = '{"id":"d1"}';
    const result = toolResult(1, { tool: "delete_document" });
    const required: RunEvent = {
      type: "confirmation_required",
      data: { step_no: 1, call_id: "call_1", tool_name: "delete_document", arguments: args, asked_at: addSeconds(createdAt, 3) },
    };
    const decision = (d: "approve" | "reject"): RunEvent => ({
      type: "confirmation.decided",
      data: { call_id: "call_1", decision: d, deadline_at: addSeconds(deadline, 10), decided_at: addSeconds(createdAt, 13) },
    });
    const run = [toolCall(1, "delete_document", args), decided(result, "knowledge.document.delete"), result];
    const events = [
      queued,
      started,
      thought(1, "delete_document", args),
      required,
      decision("approve"),
      ...run,
      message(2),
      succeeded("Refunds within 30 days.", []),
    ];
    expect(replayRun(recorded(events))).toMatchObject({ sameFinalState: true, replayedEvents: 10 });
    const rejected = replayRun(recorded(tamper(events, 5, () => decision("reject"))));
    expect(rejected.divergence).toMatchObject({ seq: 6 });
    expect(rejected.divergence!.expected).toMatch(/REJECTED_BY_USER/);
  });

  describe("approvals bound to the call", () => {
    const first = '{"title":"Meeting","body":"ship on Friday"}';
    const second = '{"title":"Payroll","body":"pay everyone twice"}';
    const noteThought = (step: number, args: string): RunEvent => ({
      type: "thought",
      data: { step_no: step, text: "", tool_calls: [{ call_id: "n0", tool_name: "save_note", arguments: args }], usage, provider: "scripted" },
    });
    const required = (step: number, args: string, fingerprint: string | undefined): RunEvent => ({
      type: "confirmation_required",
      data: {
        step_no: step,
        call_id: "n0",
        tool_name: "save_note",
        arguments: args,
        asked_at: addSeconds(createdAt, 3),
        ...(fingerprint ? { fingerprint } : {}),
      },
    });
    /** Decided 10 s after the request: the deadline moves on by 10 s for each decision before (`nth`, from 1). */
    const decision = (d: "approve" | "reject", fingerprint: string | undefined, nth = 1): RunEvent => ({
      type: "confirmation.decided",
      data: {
        call_id: "n0",
        decision: d,
        deadline_at: addSeconds(deadline, 10 * nth),
        decided_at: addSeconds(createdAt, 13),
        ...(fingerprint ? { fingerprint } : {}),
      },
    });
    const saved = (step: number, args: string): RunEvent[] => {
      const result: RunEvent = {
        type: "tool_result",
        data: {
          step_no: step,
          call_id: "n0",
          tool_name: "save_note",
          fingerprint: `fp${step}`,
          result_code: "ok",
          result: { saved: true },
          evidence: [],
          decision: { permit: true, code: "", policy_ids: [] },
        },
      };
      return [
        { type: "tool_call", data: { step_no: step, call_id: "n0", tool_name: "save_note", arguments: args } },
        decided(result, "knowledge.note.write"),
        result,
      ];
    };
    const refused: RunEvent = {
      type: "tool_result",
      data: {
        step_no: 2,
        call_id: "n0",
        tool_name: "save_note",
        fingerprint: "",
        result_code: "REJECTED_BY_USER",
        evidence: [],
        result: { error_code: "REJECTED_BY_USER", note: "the user rejected this call; do not repeat it" },
        decision: { permit: false, code: "", policy_ids: [] },
      },
    };
    const fp1 = callFingerprint(1, "save_note", first);
    const fp2 = callFingerprint(2, "save_note", second);

    it("given a reused call id asked for again and rejected, then same; a tampered fingerprint DIVERGED at its request", () => {
      const events = [
        queued,
        started,
        noteThought(1, first),
        required(1, first, fp1),
        decision("approve", fp1),
        ...saved(1, first),
        noteThought(2, second),
        required(2, second, fp2),
        decision("reject", fp2, 2),
        refused,
        message(3),
        succeeded("Refunds within 30 days.", []),
      ];
      expect(replayRun(recorded(events))).toMatchObject({ sameFinalState: true, replayedEvents: events.length });
      const tampered = replayRun(recorded(tamper(events, 10, (e) => ((e.data.fingerprint = fp1), e))));
      expect(tampered.divergence).toMatchObject({ seq: 10 });
      expect(tampered.divergence!.expected).toMatch(/^confirmation_required/);
      // A decision bound to another call than the one the run waits for is not one the gateway makes.
      const misbound = replayRun(recorded(tamper(events, 11, (e) => ((e.data.fingerprint = fp1), e))));
      expect(misbound.divergence).toMatchObject({ seq: 11 });
      expect(misbound.divergence!.expected).toMatch(new RegExp(`^confirmation.decided .*${fp2}`));
    });

    it("given a bound recording where the reused id ran on the first approval, then DIVERGED: the loop would have asked", () => {
      const events = [
        queued,
        started,
        noteThought(1, first),
        required(1, first, fp1),
        decision("approve", fp1),
        ...saved(1, first),
        noteThought(2, second),
        ...saved(2, second),
        message(3),
        succeeded("Refunds within 30 days.", []),
      ];
      const report = replayRun(recorded(events));
      expect(report.divergence).toMatchObject({ seq: 10 });
      expect(report.divergence!.expected).toMatch(/^confirmation_required/);
    });

    it("given a recording made before approvals were bound, then it replays with the old meaning (by call id)", () => {
      const events = [
        queued,
        started,
        noteThought(1, first),
        required(1, first, undefined),
        decision("approve", undefined),
        ...saved(1, first),
        noteThought(2, second),
        ...saved(2, second),
        message(3),
        succeeded("Refunds within 30 days.", []),
      ];
      expect(replayRun(recorded(events))).toMatchObject({ sameFinalState: true, replayedEvents: events.length });
    });
  });

  it("given an ask-mode refusal recorded in an agent-mode run, then DIVERGED: the loop would have run the tool", () => {
    const refusal: RunEvent = {
      type: "tool_result",
      data: {
        step_no: 1,
        call_id: "call_1",
        tool_name: "delete_document",
        fingerprint: "",
        result_code: "ASK_MODE_DENIED",
        evidence: [],
        result: { error_code: "ASK_MODE_DENIED", note: "ask mode" },
        decision: { permit: false, code: "", policy_ids: [] },
      },
    };
    const report = replayRun(recorded([queued, started, thought(1, "delete_document", "{}"), refusal, message(2), succeeded("x", [])]));
    expect(report.divergence).toMatchObject({ seq: 4 });
    expect(report.divergence!.expected).toMatch(/^tool_call/);
  });

  it("given an answer cut at the output limit and continued twice, then the final message (all the parts) reproduces", () => {
    const cut = (step: number, text: string, continuation: number): RunEvent => ({
      type: "message.truncated",
      data: { step_no: step, text, usage, provider: "scripted", continuation },
    });
    const whole = "Part one, part two, and the end.";
    const events = [queued, started, cut(1, "Part one, ", 1), cut(2, "part two, ", 2), message(3, whole), succeeded(whole, [])];
    expect(replayRun(recorded(events))).toMatchObject({ sameFinalState: true, replayedEvents: 6 });
    const doubled = tamper(events, 5, (e) => ((e.data.text = `Part one, ${whole}`), e));
    expect(replayRun(recorded(doubled)).divergence).toMatchObject({ seq: 5 });
  });

  it("given a provider fallback recorded with a model step, then same", () => {
    const fallback: RunEvent = { type: "provider.fallback", data: { step_no: 1, from: "primary", to: "scripted" } };
    const events = [queued, started, fallback, ...toolStep(1, { evidence: [doc] }), message(2), succeeded()];
    expect(replayRun(recorded(events))).toMatchObject({ sameFinalState: true, replayedEvents: 9 });
    expect(replayRun(recorded(tamper(events, 3, (e) => ((e.data.step_no = 2), e)))).divergence).toMatchObject({ seq: 3 });
  });

  describe("an invocation run (a capability invoked directly, no model)", () => {
    const calls = [
      { call_id: "invoke-1", tool_name: "focus_dataset", arguments: '{"dataset":"sales"}' },
      { call_id: "invoke-2", tool_name: "dataset_query", arguments: '{"sql":"select 1"}' },
    ];
    const invoked: RunEvent = {
      type: "run.queued",
      data: { ...(queued.data as object), mcp_session_id: "s-1", mcp_mode: "execute", invocation: { capability_id: "tool:dataset_query", calls } } as never,
    };
    const answered = (i: number, over: { code?: string; permit?: boolean; result?: unknown; next_state?: string } = {}): RunEvent => ({
      type: "tool_result",
      data: {
        step_no: 0,
        call_id: calls[i].call_id,
        tool_name: calls[i].tool_name,
        fingerprint: `fp-${i}`,
        evidence: [],
        decision: { permit: over.permit ?? true, code: over.permit === false ? "60500" : "", policy_ids: [] },
        result_code: over.code ?? "ok",
        result: over.result ?? { i },
        ...(over.next_state ? { next_state: over.next_state } : {}),
      },
    });
    const step = (i: number, over: Parameters<typeof answered>[1] = {}): RunEvent[] => {
      const result = answered(i, over);
      return [{ type: "tool_call", data: { step_no: 0, ...calls[i] } }, decided(result, "dataset.read"), result];
    };
    const outcome = (result_code: string, result: unknown) => succeeded(canonicalJson({ capability_id: "tool:dataset_query", result_code, result }), []);

    it("given the focus and the target answered, then same; a tampered outcome DIVERGED at run.succeeded", () => {
      const events = [invoked, started, ...step(0, { next_state: "dataset" }), ...step(1, { result: { rows: [[1]] } }), outcome("ok", { rows: [[1]] })];
      expect(replayRun(recorded(events))).toMatchObject({ sameFinalState: true, replayedEvents: events.length, divergence: undefined });
      const wrong = replayRun(recorded(tamper(events, events.length, (e) => ((e.data.output.text = e.data.output.text.replace("[[1]]", "[[2]]")), e))));
      expect(wrong.divergence).toMatchObject({ seq: events.length });
      // A model's step recorded where the loop would have ended the run: the loop never asks one.
      const asked = replayRun(recorded([...events.slice(0, -1), message(1), succeeded("x", [])]));
      expect(asked.divergence).toMatchObject({ seq: events.length });
      expect(asked.divergence!.expected).toMatch(/^run\.succeeded/);
    });

    it("given the focus denied, then the recorded failure with the deny code reproduces, the target never sent", () => {
      const events = [
        invoked,
        started,
        ...step(0, { permit: false, code: "60500", result: { error_code: "60500" } }),
        failed({ code: 60500, message: "denied", tool_name: "focus_dataset", step_no: 0 }),
      ];
      expect(replayRun(recorded(events))).toMatchObject({ sameFinalState: true, replayedEvents: events.length });
      // Succeeding with the denial as the outcome is not what the loop decides.
      const succeededInstead = [...events.slice(0, -1), outcome("60500", { error_code: "60500" })];
      expect(replayRun(recorded(succeededInstead)).divergence).toMatchObject({ seq: events.length });
    });
  });

  it("given a run still in progress, then not finished and no divergence", () => {
    const report = replayRun(recorded([queued, started, thought(1), toolCall(1)]));
    expect(report).toMatchObject({ finished: false, sameFinalState: false, divergence: undefined, replayedEvents: 4 });
  });

  it("given a stream that does not begin with run.queued, then DIVERGED at seq 1", () => {
    expect(replayRun(recorded([started])).divergence).toMatchObject({ seq: 1, expected: "run.queued" });
  });
});

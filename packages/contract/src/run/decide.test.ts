import { RunErrorCode } from "../codes";
import type { RunEvent } from "../events";
import { parseMicros } from "../time";
import type { RunCommand } from "./commands";
import { decide } from "./decide";
import { foldRun, initialRunState } from "./fold";

const createdAt = "2026-11-30T09:00:00.000000Z";
const deadline = "2026-11-30T09:03:00.000000Z";
const run = { id: "0b6f3c2e-4a1d-4f7e-9c3b-2d5e6f7a8b9c", tenantId: "acme" };
const at = (iso: string) => ({ now: parseMicros(iso) });
const noon = at("2026-11-30T09:01:00.000000Z");

const queued: RunEvent = {
  type: "run.queued",
  data: {
    input: "q",
    mode: "agent",
    response_language: null,
    created_by: "u",
    created_at: createdAt,
    deadline_at: deadline,
    thread_id: null,
    elevation_session_id: "es-1",
  },
};
const started: RunEvent = { type: "run.started", data: { runner_id: "r", started_at: createdAt } };
const thought: RunEvent = {
  type: "thought",
  data: {
    step_no: 1,
    text: "",
    tool_calls: [{ call_id: "c1", tool_name: "delete_all", arguments: "{}" }],
    usage: { input_tokens: 1, output_tokens: 1 },
    provider: "p",
  },
};
const asked: RunEvent = { type: "ask_user", data: { step_no: 1, call_id: "c1", question: "Which?", options: [], asked_at: "2026-11-30T09:00:30.000000Z" } };
const confirming: RunEvent = {
  type: "confirmation_required",
  data: { step_no: 1, call_id: "c1", tool_name: "delete_all", arguments: "{}", asked_at: "2026-11-30T09:00:30.000000Z", fingerprint: "fp-1" },
};
const given = (...events: RunEvent[]) => foldRun([queued, ...events]);
const failed = (code: number) => ({ type: "run.failed", data: { error: expect.objectContaining({ code }) } });

describe("the run decider: given the run's events, when a writer's command, then events, runner requests and what follows", () => {
  it("given no run, when it is queued, then run.queued with the deadline and a request for a new run", () => {
    const command: RunCommand = {
      kind: "queue",
      run,
      input: "hi",
      mode: "ask",
      responseLanguage: "de",
      createdBy: "u",
      threadId: null,
      elevationSessionId: null,
      mcpMode: "observe",
      deadlineSeconds: 180,
    };
    const d = decide(command, initialRunState, at(createdAt));
    expect(d.events).toEqual([
      {
        type: "run.queued",
        data: {
          input: "hi",
          mode: "ask",
          response_language: "de",
          created_by: "u",
          created_at: createdAt,
          deadline_at: deadline,
          thread_id: null,
          elevation_session_id: null,
          mcp_mode: "observe",
        },
      },
    ]);
    expect(d.commands).toEqual([{ command: { run_id: run.id, tenant_id: "acme", created_by: "u" }, purpose: { kind: "created" } }]);
    expect(d.effect).toEqual({ kind: "append" });
    expect(decide(command, given(), at(createdAt)).effect).toEqual({ kind: "refused", reason: "the run exists already" });
  });

  it("given a run waiting on a question, when it is answered, then input.received with the deadline moved by the wait, and the run handed back", () => {
    const d = decide({ kind: "answer", run, answer: "EU" }, given(started, thought, asked), noon);
    expect(d.events).toEqual([
      { type: "input.received", data: { call_id: "c1", answer: "EU", deadline_at: "2026-11-30T09:03:30.000000Z", answered_at: "2026-11-30T09:01:00.000000Z" } },
    ]);
    // Keyed by the version the answer makes the run (queued, started, thought, ask_user, then the answer: 5).
    expect(d.commands).toEqual([
      { command: { run_id: run.id, tenant_id: "acme", created_by: "u", elevation_session_id: "es-1" }, purpose: { kind: "handed_back", version: 5 } },
    ]);
  });

  it("given a run not waiting on a question, when it is answered, then it is refused and nothing is appended", () => {
    expect(decide({ kind: "answer", run, answer: "EU" }, given(started), noon)).toEqual({
      events: [],
      commands: [],
      effect: { kind: "refused", reason: "the run is not waiting for an answer" },
    });
  });

  it("given a run waiting on a confirmation, when it is decided, then the decision bound to the call's fingerprint and channel, and the run handed back", () => {
    const d = decide({ kind: "confirm", run, decision: "approve", channel: "api", expected: "fp-1" }, given(started, thought, confirming), noon);
    expect(d.events).toEqual([
      {
        type: "confirmation.decided",
        data: {
          call_id: "c1",
          decision: "approve",
          deadline_at: "2026-11-30T09:03:30.000000Z",
          decided_at: "2026-11-30T09:01:00.000000Z",
          fingerprint: "fp-1",
          channel: "api",
        },
      },
    ]);
    expect(d.commands).toMatchObject([{ purpose: { kind: "handed_back", version: 5 } }]);
  });

  it("given a run waiting on another call's confirmation, or on none, when a decision is made, then it is refused", () => {
    const other = decide({ kind: "confirm", run, decision: "reject", channel: "api", expected: "fp-0" }, given(started, thought, confirming), noon);
    expect(other.effect).toEqual({ kind: "refused", reason: "the run is waiting for the confirmation of another call" });
    expect(decide({ kind: "confirm", run, decision: "reject" }, given(started, thought, asked), noon).effect).toEqual({
      kind: "refused",
      reason: "the run is not waiting for a confirmation",
    });
  });

  it("given a queued or waiting run, when it is cancelled, then the request and run.cancelled at once; given a running run, only the request", () => {
    const now = "2026-11-30T09:01:00.000000Z";
    const cancelled = { type: "run.cancelled", data: { error: { code: RunErrorCode.cancelled, message: "the run was cancelled" }, finished_at: now } };
    const requested = { type: "run.cancel_requested", data: { requested_at: now } };
    expect(decide({ kind: "cancel" }, given(), noon).events).toEqual([requested, cancelled]);
    expect(decide({ kind: "cancel" }, given(started, thought, asked), noon).events).toEqual([requested, cancelled]);
    expect(decide({ kind: "cancel" }, given(started), noon)).toEqual({ events: [requested], commands: [], effect: { kind: "append" } });
  });

  it("given an ended run, when it is cancelled, then it is refused", () => {
    const ended = given(started, { type: "run.cancelled", data: { error: { code: RunErrorCode.cancelled, message: "" }, finished_at: createdAt } });
    expect(decide({ kind: "cancel" }, ended, noon).effect).toEqual({ kind: "refused", reason: "the run has already cancelled" });
  });

  it("given a running run past its deadline, when it expires, then 60402 at the step reached; before it, or while it waits for the user, nothing", () => {
    expect(decide({ kind: "expire" }, given(started, thought), at(deadline)).events).toEqual([
      { type: "run.failed", data: { error: { code: RunErrorCode.deadlinePassed, message: "the run's deadline passed", step_no: 1 }, finished_at: deadline } },
    ]);
    expect(decide({ kind: "expire" }, given(started), noon).events).toEqual([]);
    expect(decide({ kind: "expire" }, given(started, thought, asked), at("2026-11-30T10:00:00.000000Z")).events).toEqual([]);
  });

  it("given a question unanswered for the wait, when the reaper finds it, then 60406; within the wait, or not waiting, nothing", () => {
    const waitMicros = 300_000_000n;
    const waiting = given(started, thought, asked);
    expect(decide({ kind: "unanswered", waitMicros }, waiting, at("2026-11-30T09:05:30.000000Z")).events).toMatchObject([
      failed(RunErrorCode.questionUnanswered),
    ]);
    expect(decide({ kind: "unanswered", waitMicros }, waiting, at("2026-11-30T09:05:29.999999Z")).events).toEqual([]);
    expect(decide({ kind: "unanswered", waitMicros: 0n }, given(started), noon).events).toEqual([]);
  });

  it("given a run whose events cannot be folded, when it is failed as unfoldable, then 60302; an ended run, nothing", () => {
    expect(decide({ kind: "unfoldable" }, given(started), noon).events).toEqual([
      {
        type: "run.failed",
        data: {
          error: { code: RunErrorCode.outputUnparseable, message: "the run's recorded events cannot be read" },
          finished_at: "2026-11-30T09:01:00.000000Z",
        },
      },
    ]);
    const ended = given(started, { type: "run.failed", data: { error: { code: 60402, message: "" }, finished_at: deadline } });
    expect(decide({ kind: "unfoldable" }, ended, noon).events).toEqual([]);
  });

  it("when the window is compacted, then context.compacted of the calls not compacted yet, and the model is asked", () => {
    const command: RunCommand = { kind: "compact", stepNo: 3, callIds: ["a", "b"], tokensBefore: 900, tokensAfter: 400 };
    expect(decide(command, given(started), noon)).toEqual({
      events: [{ type: "context.compacted", data: { step_no: 3, call_ids: ["a", "b"], tokens_before: 900, tokens_after: 400 } }],
      commands: [],
      effect: { kind: "call_model", stepNo: 3 },
    });
    const compacted = given(started, { type: "context.compacted", data: { step_no: 2, call_ids: ["a", "b"], tokens_before: 1, tokens_after: 1 } });
    expect(decide(command, compacted, noon)).toEqual({ events: [], commands: [], effect: { kind: "call_model", stepNo: 3 } });
  });

  it("when the loop observes something, then its own decider decides, with the decision's clock; without one, the command is an error", () => {
    const observe = (_state: unknown, observation: string, now: bigint) => ({
      events: [{ type: "run.started", data: { runner_id: observation, started_at: String(now) } }] as RunEvent[],
      effect: { kind: "decide_again" } as const,
    });
    expect(decide({ kind: "observe", observation: "r-1" }, given(), { now: 7n, observe })).toEqual({
      events: [{ type: "run.started", data: { runner_id: "r-1", started_at: "7" } }],
      commands: [],
      effect: { kind: "decide_again" },
    });
    expect(() => decide<string>({ kind: "observe", observation: "r-1" }, given(), noon)).toThrow(TypeError);
  });
});

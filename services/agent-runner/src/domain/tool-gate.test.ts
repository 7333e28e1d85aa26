import { callFingerprint, foldRun, type RunEvent } from "@steward/contract";
import { gateCall, type CallGate } from "./tool-gate";
import type { ToolCatalog, ToolInfo } from "./tool-catalog";

const saveNote: ToolInfo = {
  name: "save_note",
  description: "",
  parameters: {},
  safety: "write",
  exploration: false,
  requireConfirmation: true,
  abortOnDeny: false,
  idempotent: true,
  policyPoint: "knowledge.note.write",
  states: [],
  builtIn: false,
};
const catalog: ToolCatalog = new Map([[saveNote.name, saveNote]]);

const t0 = "2026-11-30T09:00:00.000000Z";
const queued: RunEvent = {
  type: "run.queued",
  data: {
    input: "note it",
    mode: "agent",
    response_language: null,
    created_by: "u",
    created_at: t0,
    deadline_at: "2026-11-30T09:03:00.000000Z",
    thread_id: null,
  },
};
const started: RunEvent = { type: "run.started", data: { runner_id: "r", started_at: t0 } };
const FIRST = '{"title":"Meeting","body":"ship on Friday"}';
const SECOND = '{"title":"Payroll","body":"pay everyone twice"}';

const thought = (step: number, args: string, callId = "n0"): RunEvent => ({
  type: "thought",
  data: {
    step_no: step,
    text: "",
    tool_calls: [{ call_id: callId, tool_name: "save_note", arguments: args }],
    usage: { input_tokens: 1, output_tokens: 1 },
    provider: "p",
  },
});
/** What the loop appends for a request_confirmation gate (gated-call.ts). */
const required = (step: number, args: string, fingerprint?: string, callId = "n0"): RunEvent => ({
  type: "confirmation_required",
  data: { step_no: step, call_id: callId, tool_name: "save_note", arguments: args, asked_at: t0, ...(fingerprint ? { fingerprint } : {}) },
});
/** What the gateway appends (control-run.ts): bound to the awaited call's fingerprint when it has one. */
const decided = (decision: "approve" | "reject", fingerprint?: string, callId = "n0"): RunEvent => ({
  type: "confirmation.decided",
  data: { call_id: callId, decision, deadline_at: "2026-11-30T09:04:00.000000Z", decided_at: t0, ...(fingerprint ? { fingerprint } : {}) },
});
const ran = (step: number, args: string, callId = "n0"): RunEvent[] => [
  { type: "tool_call", data: { step_no: step, call_id: callId, tool_name: "save_note", arguments: args } },
  {
    type: "tool_result",
    data: {
      step_no: step,
      call_id: callId,
      tool_name: "save_note",
      fingerprint: `tool-fp-${step}`,
      result_code: "ok",
      result: { saved: true },
      evidence: [],
      decision: { permit: true, code: "", policy_ids: [] },
    },
  },
];

/** The gate for the first pending call after `events`. */
function gate(events: RunEvent[]): CallGate {
  const state = foldRun([queued, started, ...events]);
  return gateCall(state, state.pending_calls[0], catalog);
}

/** Drives the gate the way the loop does: asks, records the user's decision, and notes whether the call ran. */
function confirmAndRun(events: RunEvent[], step: number, args: string, decision: "approve" | "reject"): { events: RunEvent[]; asked: string; ran: boolean } {
  const ask = gate(events);
  if (ask.kind !== "request_confirmation") throw new Error(`expected a confirmation request, got ${ask.kind}`);
  const waiting = [...events, required(step, args, ask.fingerprint)];
  expect(gate(waiting)).toEqual({ kind: "wait" });
  const after = [...waiting, decided(decision, ask.fingerprint)];
  const next = gate(after);
  if (decision === "approve") {
    expect(next).toEqual({ kind: "invoke" });
    return { events: [...after, ...ran(step, args)], asked: ask.fingerprint, ran: true };
  }
  expect(next).toMatchObject({ kind: "refuse", code: "REJECTED_BY_USER" });
  return { events: after, asked: ask.fingerprint, ran: false };
}

describe("confirmation gate: an approval covers the exact call it was asked for", () => {
  it("asks with the call's fingerprint: step, tool and canonical arguments", () => {
    expect(gate([thought(1, FIRST)])).toEqual({ kind: "request_confirmation", fingerprint: callFingerprint(1, "save_note", FIRST) });
    // The same arguments written in another key order and spacing are the same call.
    const reordered = '{ "body": "ship on Friday", "title": "Meeting" }';
    expect(callFingerprint(1, "save_note", reordered)).toBe(callFingerprint(1, "save_note", FIRST));
    expect(callFingerprint(1, "save_note", SECOND)).not.toBe(callFingerprint(1, "save_note", FIRST));
    expect(callFingerprint(2, "save_note", FIRST)).not.toBe(callFingerprint(1, "save_note", FIRST));
    expect(callFingerprint(1, "delete_note", FIRST)).not.toBe(callFingerprint(1, "save_note", FIRST));
  });

  it("a reused call id: a second call with the same id and other arguments is asked for again and does not run on the first approval", () => {
    const first = confirmAndRun([thought(1, FIRST)], 1, FIRST, "approve");
    const reused = [...first.events, thought(2, SECOND)];
    const second = gate(reused);
    expect(second).toEqual({ kind: "request_confirmation", fingerprint: callFingerprint(2, "save_note", SECOND) });
    if (second.kind !== "request_confirmation") throw new Error("unreachable");
    expect(second.fingerprint).not.toBe(first.asked);
    // Asked, not yet decided: the run waits; the first approval does not stand in for it.
    expect(gate([...reused, required(2, SECOND, second.fingerprint)])).toEqual({ kind: "wait" });
    // Rejected: refused, never run.
    const rejected = confirmAndRun(reused, 2, SECOND, "reject");
    expect(rejected.ran).toBe(false);
    const state = foldRun([queued, started, ...rejected.events]);
    expect(state.confirmations.map((c) => c.decision)).toEqual(["approve", "reject"]);
  });

  it("a repeated call with the same id and the same arguments in a later step is asked for again", () => {
    const first = confirmAndRun([thought(1, FIRST)], 1, FIRST, "approve");
    expect(gate([...first.events, thought(2, FIRST)])).toEqual({ kind: "request_confirmation", fingerprint: callFingerprint(2, "save_note", FIRST) });
  });

  it("a rejection covers only its call: the same id with other arguments is asked for, not refused", () => {
    const first = confirmAndRun([thought(1, FIRST)], 1, FIRST, "reject");
    const refusal: RunEvent = {
      type: "tool_result",
      data: {
        step_no: 1,
        call_id: "n0",
        tool_name: "save_note",
        fingerprint: "",
        result_code: "REJECTED_BY_USER",
        evidence: [],
        result: { error_code: "REJECTED_BY_USER", note: "rejected" },
        decision: { permit: false, code: "", policy_ids: [] },
      },
    };
    expect(gate([...first.events, refusal, thought(2, SECOND)])).toMatchObject({ kind: "request_confirmation" });
  });

  it("an approval holds for its own call when the run resumes in the same step (a crash after the decision)", () => {
    const fp = callFingerprint(1, "save_note", FIRST);
    expect(gate([thought(1, FIRST), required(1, FIRST, fp), decided("approve", fp)])).toEqual({ kind: "invoke" });
  });

  it("a decision that names another call's fingerprint does not approve this one", () => {
    const fp = callFingerprint(1, "save_note", FIRST);
    const other = callFingerprint(1, "save_note", SECOND);
    expect(gate([thought(1, FIRST), required(1, FIRST, fp), decided("approve", other)])).toEqual({ kind: "wait" });
  });

  it("a decision recorded without a fingerprint (an older gateway) is bound to the call the run awaited", () => {
    const fp = callFingerprint(1, "save_note", FIRST);
    const events = [thought(1, FIRST), required(1, FIRST, fp), decided("approve"), ...ran(1, FIRST)];
    expect(gate(events.slice(0, 3))).toEqual({ kind: "invoke" });
    expect(gate([...events, thought(2, SECOND)])).toMatchObject({ kind: "request_confirmation" });
  });

  it("runs recorded before approvals were bound keep their meaning: a decision applies by call id", () => {
    const legacy = [thought(1, FIRST), required(1, FIRST), decided("approve"), ...ran(1, FIRST)];
    expect(gate(legacy.slice(0, 3))).toEqual({ kind: "invoke" });
    expect(gate([...legacy, thought(2, SECOND)])).toEqual({ kind: "invoke" });
    expect(gate([thought(1, FIRST), required(1, FIRST)])).toEqual({ kind: "wait" });
    expect(gate([thought(1, FIRST), required(1, FIRST), decided("reject")])).toMatchObject({ kind: "refuse", code: "REJECTED_BY_USER" });
    // A call id that looks like a bound record's key matches nothing: legacy records are kept apart.
    const fp = callFingerprint(1, "save_note", FIRST);
    const bound = [thought(1, FIRST), required(1, FIRST, fp), decided("approve", fp), ...ran(1, FIRST)];
    expect(gate([...bound, thought(2, SECOND, `n0@${fp}`)])).toMatchObject({ kind: "request_confirmation" });
  });
});

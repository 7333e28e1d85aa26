import { foldRun, type RunEvent, type ToolResult } from "@steward/contract";
import { eventsForToolOutcome } from "./tool-events";
import type { ToolInfo } from "./tool-catalog";

// Given a run waiting for a propose_knowledge call, when tool-exec's answer comes, then the result is recorded
// and, for a proposal it queued, `knowledge.proposed` right after it (docs/memory.md).
const at = "2026-11-30T09:00:00.000000Z";
const state = foldRun([
  { type: "run.queued", data: { input: "q", mode: "agent", response_language: null, created_by: "u", created_at: at, deadline_at: at, thread_id: null } },
  { type: "run.started", data: { runner_id: "r", started_at: at } },
  {
    type: "thought",
    data: {
      step_no: 2,
      text: "",
      tool_calls: [{ call_id: "c1", tool_name: "propose_knowledge", arguments: "{}" }],
      usage: { input_tokens: 1, output_tokens: 1 },
      provider: "p",
    },
  },
]);
const call = state.pending_calls[0];
const tool: ToolInfo = {
  name: "propose_knowledge",
  description: "",
  parameters: {},
  safety: "write",
  exploration: false,
  requireConfirmation: false,
  abortOnDeny: false,
  idempotent: true,
  policyPoint: "knowledge.proposal.create",
  states: [],
  builtIn: false,
};
const answer = (resultCode: string, result: unknown, permit = true): ToolResult => ({
  type: "tool_result",
  data: {
    step_no: 2,
    call_id: "c1",
    tool_name: "propose_knowledge",
    fingerprint: "fp",
    decision: { permit, code: permit ? "" : "60500", policy_ids: [] },
    result_code: resultCode,
    result,
    evidence: [],
  },
});
const types = (events: RunEvent[]) => events.map((e) => e.type);

describe("eventsForToolOutcome: a knowledge proposal", () => {
  it("records knowledge.proposed with the proposal's id and title after the result of a queued proposal", () => {
    const events = eventsForToolOutcome(state, call, tool, answer("ok", { proposal_id: "p-1", status: "pending", title: "Ferry" }), at);
    expect(types(events)).toEqual(["tool.decided", "tool_result", "knowledge.proposed"]);
    expect(events[2]).toEqual({ type: "knowledge.proposed", data: { step_no: 2, call_id: "c1", proposal_id: "p-1", title: "Ferry" } });
    // The fold takes it without changing what the loop decides on (only the stream's version moves).
    expect({ ...foldRun(events, state), version: 0 }).toEqual({ ...foldRun(events.slice(0, 2), state), version: 0 });
  });

  it.each([
    ["a limit", answer("PROPOSAL_LIMIT_REACHED", { error_code: "PROPOSAL_LIMIT_REACHED" })],
    ["a rejection", answer("PROPOSAL_REJECTED", { error_code: "PROPOSAL_REJECTED", reason: "secret" })],
    ["a deny", answer("60500", { error_code: "60500" }, false)],
  ])("records no proposal for %s", (_what, result) => {
    expect(types(eventsForToolOutcome(state, call, tool, result, at))).not.toContain("knowledge.proposed");
  });

  it("records none for another tool's result, whatever it holds", () => {
    const other = { ...call, tool_name: "save_note" };
    const result = answer("ok", { proposal_id: "p-1" });
    expect(types(eventsForToolOutcome(state, other, tool, { ...result, data: { ...result.data, tool_name: "save_note" } }, at))).toEqual([
      "tool.decided",
      "tool_result",
    ]);
  });
});

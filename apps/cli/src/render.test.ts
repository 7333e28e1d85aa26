import { eventViewOf } from "./event-view";
import { createRenderer } from "./render";
import { createStyle } from "./style";

const plain = () => createRenderer(createStyle(false));
const ev = (type: string, data: Record<string, unknown>, seq = 1) => ({ type, seq, data });

describe("rendering run events for a person", () => {
  it("shows each kind on its own line, policy decisions and results included", () => {
    const r = plain();
    const out = [
      ev("run.queued", { input: "How long do I have to ask for a refund?", mode: "agent" }),
      ev("run.started", { runner_id: "runner-1" }),
      ev("thought", { step_no: 1, text: "I should search.", tool_calls: [] }),
      ev("thought", { step_no: 1, text: "", tool_calls: [] }),
      ev("tool_call", { step_no: 1, call_id: "c1", tool_name: "knowledge_search", arguments: '{ "query": "refund" }' }),
      ev("tool.decided", {
        tool_name: "knowledge_search",
        policy_point: "knowledge.document.read",
        permit: true,
        code: "",
        policy_ids: ["member-knowledge-read"],
      }),
      ev("tool.decided", { tool_name: "save_note", policy_point: "knowledge.document.write", permit: false, code: "60500", policy_ids: [] }),
      ev("tool_result", { tool_name: "knowledge_search", result_code: "ok", result: { hits: 1 } }),
      ev("tool_result", { tool_name: "save_note", result_code: "REJECTED_BY_USER", result: null }),
      ev("circuit.opened", { tool_name: "flaky", failures: 3 }),
      ev("ask_user", { question: "Which region?", options: ["EU", "US"] }),
      ev("input.received", { answer: "EU" }),
      ev("confirmation_required", { tool_name: "save_note", arguments: '{"title":"T"}', fingerprint: "f".repeat(64) }),
      ev("confirmation.decided", { decision: "approve" }),
      ev("confirmation.decided", { decision: "reject" }),
      ev("provider.fallback", { from: "primary", to: "fallback" }),
      ev("run.cancel_requested", {}),
      ev("iteration_limit", { code: 60401, limit: 25 }),
      ev("error", { code: 60401, message: "step budget spent" }),
      ev("run.failed", { error: { code: 60400, message: "cycle", tool_name: "t", step_no: 9, cycle_length: 2 } }),
      ev("run.cancelled", { error: { code: 60405, message: "cancelled by the user" } }),
      ev("something.new", {}),
    ]
      .map((e) => r.render(e))
      .join("");
    expect(out).toBe(
      [
        "queued (agent mode): How long do I have to ask for a refund?",
        "started on runner-1",
        "thinking: I should search.",
        '→ knowledge_search {"query":"refund"}',
        "  policy knowledge.document.read: permit by member-knowledge-read",
        "  policy knowledge.document.write: deny 60500",
        '← knowledge_search: ok {"hits":1}',
        "← save_note: REJECTED_BY_USER",
        "! flaky failed 3 times in a row: its circuit is open",
        "? Which region?",
        "  1. EU",
        "  2. US",
        "  answered: EU",
        '! approval needed: save_note {"title":"T"}',
        "  approved",
        "  rejected",
        "! model provider primary failed; fallback answers",
        "cancel requested",
        "! the step budget (25) is spent",
        "✗ failed: 60400 cycle (tool t, step 9, cycle of 2)",
        "✗ cancelled: 60405 cancelled by the user",
        "· something.new",
        "",
      ].join("\n"),
    );
  });

  it("streams the answer's deltas inline; the stored message then only ends the line", () => {
    const r = plain();
    const out = [
      ev("message.delta", { step_no: 2, delta: "You have " }),
      ev("message.delta", { step_no: 2, delta: "30 days." }),
      ev("message", { step_no: 2, text: "You have 30 days." }),
      ev("run.succeeded", { output: { text: "You have 30 days.", evidence: [{ document_id: "d1", title: "Refund policy" }] } }),
    ].map((e) => r.render(e));
    expect(out.join("")).toBe("You have 30 days.\n✓ succeeded\n  sources:\n    - Refund policy (d1)\n");
  });

  it("prints the answer whole when a stored event cut into its deltas (a live delta overtook it)", () => {
    const r = plain();
    const out = [
      ev("message.delta", { step_no: 2, delta: "region i" }),
      ev("input.received", { answer: "US" }),
      ev("message.delta", { step_no: 2, delta: "s US" }),
      ev("message", { step_no: 2, text: "region is US" }),
    ].map((e) => r.render(e));
    expect(out.join("")).toBe("region i\n  answered: US\ns US\nregion is US\n");
  });

  it("prints a message in full when no delta came (a resumed or listed stream)", () => {
    const r = plain();
    expect(r.render(ev("message", { step_no: 1, text: "Thirty days." }))).toBe("Thirty days.\n");
  });

  it("a line after deltas with no trailing newline starts on a fresh line", () => {
    const r = plain();
    r.render(ev("message.delta", { step_no: 1, delta: "partial" }));
    expect(r.render(ev("run.failed", { error: { code: 60402, message: "deadline" } }))).toBe("\n✗ failed: 60402 deadline\n");
  });

  it("colours only when the style is on", () => {
    const on = createRenderer(createStyle(true)).render(ev("run.succeeded", { output: null }));
    expect(on).toBe("\x1b[32m✓ succeeded\x1b[39m\n");
    expect(plain().render(ev("run.succeeded", { output: null }))).toBe("✓ succeeded\n");
  });
});

describe("event views from SSE", () => {
  it("keeps the envelope of a stored event and wraps the bare payload of a live-only one", () => {
    expect(eventViewOf({ event: "message", id: "7", data: '{"seq":7,"type":"message","data":{"text":"hi"},"recorded_at":"t"}' })).toEqual({
      type: "message",
      seq: 7,
      data: { text: "hi" },
      recorded_at: "t",
    });
    expect(eventViewOf({ event: "message.delta", data: '{"step_no":1,"delta":"h"}' })).toEqual({ type: "message.delta", data: { step_no: 1, delta: "h" } });
    expect(eventViewOf({ event: "error", data: "not json" })).toEqual({ type: "error", data: { value: "not json" } });
  });
});

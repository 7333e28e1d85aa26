import type { RunSnapshot, StoredRunEvent } from "@steward/contract";
import { outcomeOf, waitingOf } from "./run-outcome";

const event = (seq: number, type: string, data: Record<string, unknown> = {}) => ({ type, data, metadata: { seq } }) as unknown as StoredRunEvent;
const snapshot = (state: string, output: unknown = null) => ({ id: "r1", state, output, error: null }) as unknown as RunSnapshot;

describe("what a run waits for, from its events", () => {
  it("is the last question or confirmation not answered yet", () => {
    const asked = event(3, "confirmation_required", { tool_name: "save_note", arguments: "{}", fingerprint: "f".repeat(64) });
    expect(waitingOf([event(1, "run.queued"), asked])).toEqual({ kind: "confirmation", tool_name: "save_note", arguments: "{}", fingerprint: "f".repeat(64) });
    expect(waitingOf([asked, event(4, "confirmation.decided")])).toBeNull();
    const question = event(6, "ask_user", { question: "Which region?", options: ["EU", "US"] });
    expect(waitingOf([asked, event(4, "confirmation.decided"), question])).toEqual({ kind: "question", question: "Which region?", options: ["EU", "US"] });
    expect(waitingOf([question, event(7, "input.received")])).toBeNull();
  });

  it("is shown only while the run waits; an ended or waiting run is settled, a running one is not", () => {
    const asked = [event(2, "ask_user", { question: "Which region?", options: [] })];
    expect(outcomeOf(snapshot("awaiting_input"), asked)).toMatchObject({ state: "awaiting_input", settled: true, waiting_for: { kind: "question" } });
    expect(outcomeOf(snapshot("running"), asked)).toMatchObject({ settled: false, waiting_for: null, answer: null, evidence: [] });
    expect(outcomeOf(snapshot("succeeded", { text: "EU", evidence: [{ document_id: "d" }] }), [])).toMatchObject({
      run_id: "r1",
      settled: true,
      answer: "EU",
      evidence: [{ document_id: "d" }],
    });
  });
});

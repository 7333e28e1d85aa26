import type { RunSnapshot, StoredRunEvent } from "@steward/contract";
import { createRunFollower, outcomeOf, waitingOf } from "./run-outcome";

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

describe("following a run holds a slot of the caller's share", () => {
  const principal = { tenantId: "acme", userId: "mo", roles: ["member"] };
  const running = snapshot("running");
  const fixture = (slot: "free" | "full") => {
    const held: string[] = [];
    const reads = { count: 0 };
    const follow = createRunFollower({
      reads: { get: async () => (reads.count++, running), events: async () => [], list: async () => ({ items: [], total: 0 }), finished: async () => false },
      feed: { watch: () => ({ ready: Promise.resolve(), close: () => undefined }) },
      pollMs: 5,
      holdSlot: () => {
        if (slot === "full") return null;
        held.push("taken");
        return () => held.push("released");
      },
    });
    return { follow, held, reads };
  };

  it("while it waits, and gives it back when the wait ends", async () => {
    const { follow, held } = fixture("free");
    const outcome = await follow(principal, "r1", { waitMs: 30 });
    expect(outcome).toMatchObject({ state: "running", settled: false });
    expect(held).toEqual(["taken", "released"]);
  });

  it("answers the run as it stands, without waiting, when the share is full", async () => {
    const { follow, held, reads } = fixture("full");
    const outcome = await follow(principal, "r1", { waitMs: 60_000 });
    expect(outcome).toMatchObject({ state: "running", settled: false });
    // The ownership check and one read: no re-read every 5 ms for a minute.
    expect(reads.count).toBe(2);
    expect(held).toEqual([]);
  });
});

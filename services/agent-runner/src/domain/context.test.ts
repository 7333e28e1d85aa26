import type { RunEvent } from "@steward/contract";
import { callsToCompact, compactValue, estimateTokens } from "./compaction";
import type { ChatMessage } from "./model";
import { OUTPUT_BAND, outputCeiling } from "./output-ceiling";
import { systemPrompt } from "./prompt";
import { LEDGER_MAX_CHARS, stepLedger } from "./step-ledger";

const result = (step: number, body: unknown): RunEvent => ({
  type: "tool_result",
  data: {
    step_no: step,
    call_id: `c${step}`,
    tool_name: "run_query",
    fingerprint: "f",
    decision: { permit: true, code: "", policy_ids: [] },
    result_code: "ok",
    result: body,
    evidence: [],
  },
});

describe("the step ledger", () => {
  it("lists the newest steps first and never passes 1500 characters", () => {
    const events = Array.from({ length: 60 }, (_, i) => result(i + 1, { sql: "select * from orders where id = " + "9".repeat(100) }));
    const ledger = stepLedger(events);
    expect(ledger.length).toBeLessThanOrEqual(LEDGER_MAX_CHARS);
    expect(ledger.split("\n")[0]).toMatch(/^- step 60 run_query: ok/);
  });

  it("stays out of the system prompt, which holds only the core and the state section", () => {
    const prompt = systemPrompt("focused");
    expect(prompt).toContain("A dataset is in focus");
    expect(prompt).not.toMatch(/step \d|Run notes|language/);
  });
});

describe("the output ceiling", () => {
  it("takes the profile's setting, else the state default, capped by the model's known maximum, within the band", () => {
    expect(outputCeiling({ agentState: "general" })).toBe(2048);
    expect(outputCeiling({ agentState: "focused" })).toBe(4096);
    expect(outputCeiling({ agentState: "general", profileMax: 6000 })).toBe(6000);
    expect(outputCeiling({ agentState: "general", profileMax: 6000, model: "gpt-3.5-turbo" })).toBe(4096);
    expect(outputCeiling({ agentState: "general", profileMax: 50 })).toBe(OUTPUT_BAND.min);
    expect(outputCeiling({ agentState: "general", profileMax: 50_000, model: "o3" })).toBe(OUTPUT_BAND.max);
  });
});

describe("compaction", () => {
  const big = (id: string) => ({
    role: "tool" as const,
    tool_call_id: id,
    content: JSON.stringify({ result_code: "ok", result: { rows: Array(200).fill({ a: 1 }), note: "x".repeat(300) } }),
  });
  const messages: ChatMessage[] = [{ role: "system", content: "s" }, { role: "user", content: "q" }, big("a"), big("b"), big("c"), big("d")];

  it("keeps key fields only", () => {
    expect(compactValue({ rows: [1, 2, 3], total: 3, nested: { a: 1, b: 2 } })).toEqual({ rows: { items: 3 }, total: 3, nested: { fields: 2 } });
  });

  it("compacts the oldest results until the conversation fits, never the newest two", () => {
    const chosen = callsToCompact(messages, estimateTokens(messages) - 10);
    expect(chosen).toEqual(["a"]);
    expect(callsToCompact(messages, 10)).toEqual(["a", "b"]);
    expect(callsToCompact(messages, 1_000_000)).toEqual([]);
  });
});

import { describe, expect, it } from "@jest/globals";
import { ledgerOf } from "./step-ledger";

const result = (step_no: number, tool_name: string, result_code: string, result: unknown) => ({
  type: "tool_result",
  data: { step_no, tool_name, result_code, result },
});

describe("ledgerOf", () => {
  it("lists the tool steps newest first with their outcome, leaving out questions to the user and other events", () => {
    const events = [
      { type: "thought", data: {} },
      result(1, "knowledge_search", "ok", { matches: 1 }),
      result(2, "ask_user", "ok", { answer: "EU" }),
      result(3, "save_note", "REJECTED_BY_USER", null),
    ];
    expect(ledgerOf(events)).toEqual([
      { step: 3, tool: "save_note", code: "REJECTED_BY_USER", preview: "null" },
      { step: 1, tool: "knowledge_search", code: "ok", preview: '{"matches":1}' },
    ]);
  });

  it("cuts a long result to a preview", () => {
    const [line] = ledgerOf([result(1, "dataset_query", "ok", "x".repeat(500))]);
    expect(line.preview).toHaveLength(120);
    expect(line.preview.endsWith("…")).toBe(true);
  });
});

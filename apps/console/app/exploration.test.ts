import { describe, expect, it } from "@jest/globals";
import { explorationOf } from "./exploration";

const result = (exploration: boolean, result_code = "ok") => ({ type: "tool_result", data: { exploration, result_code } });

describe("explorationOf", () => {
  it("counts the results of exploration calls only", () => {
    expect(explorationOf([result(true), result(false), result(true), { type: "thought", data: {} }])).toEqual({ used: 2, blocked: false });
  });

  it("is blocked once the budget is reached, until the marked question is answered; continuing starts again", () => {
    const spent = [...Array.from({ length: 7 }, () => result(true)), result(false, "EXPLORATION_BUDGET_REACHED")];
    expect(explorationOf(spent)).toEqual({ used: 7, blocked: true });
    const asked = [...spent, { type: "ask_user", data: { call_id: "e9", question: "[[EXPLORATION_BUDGET]] Go on?" } }];
    expect(explorationOf([...asked, { type: "input.received", data: { call_id: "e9", answer: "Stop for now" } }])).toEqual({ used: 7, blocked: false });
    expect(explorationOf([...asked, { type: "input.received", data: { call_id: "e9", answer: "Continue exploring" } }, result(true)])).toEqual({
      used: 1,
      blocked: false,
    });
  });

  it("is not reset by the answer to an ordinary question", () => {
    const events = [
      result(true),
      { type: "ask_user", data: { call_id: "q0", question: "Which region?" } },
      { type: "input.received", data: { call_id: "q0", answer: "Continue exploring" } },
    ];
    expect(explorationOf(events)).toEqual({ used: 1, blocked: false });
  });
});

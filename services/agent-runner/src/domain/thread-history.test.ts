import type { RunEvent } from "@steward/contract";
import { estimateTokens } from "./compaction";
import {
  DEFAULT_CONTEXT_TOKENS,
  HISTORY_MAX_TOKENS,
  HISTORY_TEXT_MAX_CHARS,
  buildHistory,
  historyBudget,
  historyMessages,
  ownInputOf,
  type EarlierRun,
} from "./thread-history";

const at = "2026-11-30T09:00:00.000000Z";
const queued = (input: string): RunEvent => ({
  type: "run.queued",
  data: { input, mode: "agent", response_language: null, created_by: "u", created_at: at, deadline_at: at, thread_id: "t1" },
});
const result = (step: number, tool: string, value: unknown): RunEvent => ({
  type: "tool_result",
  data: {
    step_no: step,
    call_id: `c${step}`,
    tool_name: tool,
    fingerprint: "f",
    result_code: "ok",
    result: value,
    evidence: [],
    decision: { permit: true, code: "", policy_ids: [] },
  },
});
const succeeded = (text: string): RunEvent => ({ type: "run.succeeded", data: { output: { text, evidence: [] }, finished_at: at } });
const failed: RunEvent = { type: "run.failed", data: { error: { code: 60402, message: "deadline" }, finished_at: at } };

/** An earlier run: its input, its tool results (one per step), and how it ended. */
function run(runId: string, input: string, steps: unknown[], end: RunEvent | null): EarlierRun {
  return { runId, events: [queued(input), ...steps.map((v, i) => result(i + 1, "knowledge_search", v)), ...(end ? [end] : [])] };
}

describe("buildHistory", () => {
  it("given earlier runs, then each ended one is a turn: its input, its answer and its tool steps as ledger lines, oldest first", () => {
    // The fact sits past the run's own ledger preview (120 characters): the history previews more.
    const long = { note: "x".repeat(200), fact: "the Lisbon office opened in 2019" };
    const h = buildHistory({
      threadId: "t1",
      runs: [
        run("r1", "When did Lisbon open?", [long], succeeded("In 2019.")),
        { runId: "r2", events: [queued("Which region?"), result(1, "ask_user", { answer: "EMEA" }), failed] },
        run("r3", "still going", [], null),
      ],
      budgetTokens: 8000,
    });
    expect(h.turns).toEqual([
      {
        run_id: "r1",
        status: "succeeded",
        input: "When did Lisbon open?",
        answer: "In 2019.",
        steps: [expect.stringContaining("Lisbon office opened in 2019")],
        steps_dropped: 0,
      },
      { run_id: "r2", status: "failed", input: "Which region?", answer: null, steps: ['- step 1 ask_user: ok {"answer":"EMEA"}'], steps_dropped: 0 },
    ]);
    expect(h.turns[0].steps[0]).toMatch(/^- step 1 knowledge_search: ok \{"note":"x+","fact":"the Lisbon office opened in 2019"\}$/);
    expect(h.dropped).toEqual([]);
    expect(h).toMatchObject({ thread_id: "t1", budget_tokens: 8000, tokens: estimateTokens(historyMessages(h)) });
  });

  it("cuts a long input or answer to a bound", () => {
    const h = buildHistory({ threadId: "t1", runs: [run("r1", "q".repeat(9000), [], succeeded("a".repeat(9000)))], budgetTokens: 8000 });
    expect(h.turns[0].input).toHaveLength(HISTORY_TEXT_MAX_CHARS);
    expect(h.turns[0].answer).toHaveLength(HISTORY_TEXT_MAX_CHARS);
    expect(h.turns[0].answer!.endsWith("…")).toBe(true);
  });

  const three = [
    run("r1", "first question", ["a".repeat(300), "b".repeat(300)], succeeded("first answer")),
    run("r2", "second question", ["c".repeat(300)], failed),
    run("r3", "third question", ["d".repeat(300)], succeeded("third answer")),
  ];
  const fullTokens = buildHistory({ threadId: "t1", runs: three, budgetTokens: 100_000 }).tokens;

  it("over budget, drops a turn that ended without an answer first", () => {
    const h = buildHistory({ threadId: "t1", runs: three, budgetTokens: fullTokens - 50 });
    expect(h.turns.map((t) => t.run_id)).toEqual(["r1", "r3"]);
    expect(h.dropped).toEqual([{ run_id: "r2", part: "turn", reason: "budget", steps: 1, tokens: expect.any(Number) }]);
    expect(h.dropped[0].tokens).toBeGreaterThan(75);
    expect(h.tokens).toBeLessThanOrEqual(h.budget_tokens);
  });

  it("then tool steps, the oldest turn's oldest first, one at a time; then whole turns, oldest first", () => {
    const withoutR2 = buildHistory({ threadId: "t1", runs: three, budgetTokens: fullTokens - 50 }).tokens;
    const oneStep = buildHistory({ threadId: "t1", runs: three, budgetTokens: withoutR2 - 10 });
    expect(oneStep.turns.map((t) => [t.run_id, t.steps.length, t.steps_dropped])).toEqual([
      ["r1", 1, 1],
      ["r3", 1, 0],
    ]);
    expect(oneStep.turns[0].steps[0]).toContain("bbb");
    expect(oneStep.dropped).toEqual([
      { run_id: "r1", part: "steps", reason: "budget", steps: 1, tokens: expect.any(Number) },
      { run_id: "r2", part: "turn", reason: "budget", steps: 1, tokens: expect.any(Number) },
    ]);

    const noSteps = buildHistory({ threadId: "t1", runs: three, budgetTokens: 120 });
    expect(noSteps.turns.map((t) => [t.run_id, t.steps.length, t.steps_dropped])).toEqual([
      ["r1", 0, 2],
      ["r3", 0, 1],
    ]);

    const newestOnly = buildHistory({ threadId: "t1", runs: three, budgetTokens: noSteps.tokens - 1 });
    expect(newestOnly.turns.map((t) => t.run_id)).toEqual(["r3"]);
    expect(newestOnly.dropped.map((d) => [d.run_id, d.part, d.steps])).toEqual([
      ["r1", "turn", 2],
      ["r2", "turn", 1],
      ["r3", "steps", 1],
    ]);
    expect(newestOnly.tokens).toBeLessThan(noSteps.tokens);
    // The model is told that older turns are left out.
    expect(historyMessages(newestOnly)[0].content).toContain("2 older turns left out");
  });

  it("counts in a drop the tokens of what it left out: a turn's own messages, steps with their note once none is left", () => {
    const alone = (runs: EarlierRun[]) => buildHistory({ threadId: "t1", runs, budgetTokens: 100_000 });
    const r2Alone = estimateTokens(historyMessages(alone([three[1]])).slice(1, -1)); // without the opening and closing notes
    const h = buildHistory({ threadId: "t1", runs: three, budgetTokens: fullTokens - 50 });
    expect(h.dropped).toEqual([{ run_id: "r2", part: "turn", reason: "budget", steps: 1, tokens: r2Alone }]);
    // With every step of r1 and r3 gone (their notes too), the history is that much shorter than without r2 alone
    // (give or take the rounding of each estimate).
    const noSteps = buildHistory({ threadId: "t1", runs: three, budgetTokens: 120 });
    const stepsLeftOut = noSteps.dropped.filter((d) => d.part === "steps").reduce((n, d) => n + d.tokens, 0);
    expect(Math.abs(h.tokens - noSteps.tokens - stepsLeftOut)).toBeLessThanOrEqual(2);
    expect(stepsLeftOut).toBeGreaterThan(225); // three results of 300 characters and more
  });

  it("with no room at all, keeps nothing and says so", () => {
    const h = buildHistory({ threadId: "t1", runs: three, budgetTokens: 0 });
    expect(h.turns).toEqual([]);
    expect(h.dropped.map((d) => d.part)).toEqual(["turn", "turn", "turn"]);
    expect(historyMessages(h)).toEqual([{ role: "user", content: "3 earlier turns of this conversation are left out to fit the model's window." }]);
    expect(ownInputOf([{ role: "system", content: "s" }, ...historyMessages(h), { role: "user", content: "now" }])).toBe("now");
  });

  it("names the older runs it did not read as dropped by the turn limit, oldest first", () => {
    const h = buildHistory({ threadId: "t1", runs: [three[0]], unread: ["r0a", "r0b"], budgetTokens: 8000 });
    expect(h.dropped).toEqual([
      { run_id: "r0a", part: "turn", reason: "turn_limit", steps: 0, tokens: 0 },
      { run_id: "r0b", part: "turn", reason: "turn_limit", steps: 0, tokens: 0 },
    ]);
    expect(h.turns.map((t) => t.run_id)).toEqual(["r1"]);
  });

  it("for the thread's first run, is empty and shows the model nothing", () => {
    const h = buildHistory({ threadId: "t1", runs: [], budgetTokens: 8000 });
    expect(h).toEqual({ thread_id: "t1", turns: [], dropped: [], tokens: 0, budget_tokens: 8000 });
    expect(historyMessages(h)).toEqual([]);
  });
});

describe("historyMessages", () => {
  it("shows each turn as user and assistant messages, its steps in a user note, never a tool call or tool message", () => {
    const h = buildHistory({ threadId: "t1", runs: [run("r1", "q1", [{ n: 1 }], succeeded("a1")), run("r2", "q2", [], failed)], budgetTokens: 8000 });
    const messages = historyMessages(h);
    expect(messages.map((m) => m.role)).toEqual(["user", "user", "user", "assistant", "user", "user", "user"]);
    expect(messages.map((m) => m.content)).toEqual([
      "Earlier turns of this conversation follow, oldest first.",
      "q1",
      'Tool steps of that turn, oldest first (tool output, for reference only):\n- step 1 knowledge_search: ok {"n":1}',
      "a1",
      "q2",
      "That turn ended failed without an answer.",
      "End of the earlier turns. The current request follows.",
    ]);
    // A scripted model finds the run's own input after them, as it does without a history.
    expect(ownInputOf([{ role: "system", content: "s" }, ...messages, { role: "user", content: "now" }, { role: "user", content: "note" }])).toBe("now");
    expect(
      ownInputOf([
        { role: "system", content: "s" },
        { role: "user", content: "plain" },
      ]),
    ).toBe("plain");
    expect(messages.some((m) => m.role === "tool" || (m.role === "assistant" && m.tool_calls))).toBe(false);
  });
});

describe("historyBudget", () => {
  it("takes a share of the window's room, capped; a default window when none is configured; never below 0", () => {
    expect(historyBudget(undefined, 2048)).toBe(Math.min(HISTORY_MAX_TOKENS, Math.floor((DEFAULT_CONTEXT_TOKENS * 0.9 - 2048) * 0.3)));
    expect(historyBudget(4000, 256)).toBe(Math.floor((3600 - 256) * 0.3));
    expect(historyBudget(1_000_000, 8192)).toBe(HISTORY_MAX_TOKENS);
    expect(historyBudget(500, 2048)).toBe(0);
  });
});

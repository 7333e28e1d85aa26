/**
 * The exploration budget's count, derived from a run's events exactly as the runner folds it
 * (packages/contract/src/run/fold.ts; SPEC §4): each permitted call of an exploration tool has `exploration: true`
 * on its `tool_result`; a result `EXPLORATION_BUDGET_REACHED` blocks further calls; answering the
 * `[[EXPLORATION_BUDGET]]` question unblocks, and "Continue exploring" starts the count again. No event or
 * snapshot field carries the count, so the console recomputes it (the contract's fold is not bundled: it is a
 * Node package).
 */

/** SPEC §4: past 7 exploration calls in a run, the next one is skipped. */
export const EXPLORATION_BUDGET = 7;
const MARKER = "[[EXPLORATION_BUDGET]]";
const CONTINUE = "Continue exploring";
const REACHED = "EXPLORATION_BUDGET_REACHED";

export interface ExplorationUse {
  readonly used: number;
  /** The budget was reached and the model must ask before exploring again. */
  readonly blocked: boolean;
}

export function explorationOf(events: readonly { readonly type: string; readonly data: Record<string, unknown> }[]): ExplorationUse {
  let used = 0;
  let blocked = false;
  const questions = new Set<string>();
  for (const { type, data } of events) {
    if (type === "tool_result") {
      if (data.exploration === true) used += 1;
      if (data.result_code === REACHED) blocked = true;
    } else if (type === "ask_user" && typeof data.question === "string" && data.question.includes(MARKER)) {
      questions.add(String(data.call_id));
    } else if (type === "input.received" && questions.has(String(data.call_id))) {
      blocked = false;
      if (data.answer === CONTINUE) used = 0;
    }
  }
  return { used, blocked };
}

import { PayloadLimits, eventBytes, type ContextHistory, type HistoryDrop, type HistoryTurn, type RunEvent } from "@steward/contract";
import { estimateTokens } from "./compaction";
import type { ChatMessage } from "./model";
import { ledgerLine } from "./step-ledger";

/*
 * Context across turns (docs/threads.md): a run in a thread is shown the thread's earlier turns — each
 * one's input, final answer and tool steps as ledger lines — truncated to a token budget. Built once, recorded
 * as `context.history`, and rendered from that record by `conversationOf`, so resumes and replays agree.
 */

export type HistoryData = ContextHistory["data"];

/** The window assumed when the model's is not configured (LLM_CONTEXT_TOKENS), in tokens. */
export const DEFAULT_CONTEXT_TOKENS = 32_000;
/** The share of the window's room (90 % of it, less the output ceiling) the history may take. */
export const HISTORY_SHARE = 0.3;
/** The history's ceiling whatever the window, in tokens: it is recorded in one event (`PayloadLimits`). */
export const HISTORY_MAX_TOKENS = 8_000;
/** Earlier runs read at most, the newest; older ones are dropped unread (`turn_limit`). */
export const HISTORY_MAX_TURNS = 20;
/** An input or an answer is cut to this many characters. */
export const HISTORY_TEXT_MAX_CHARS = 4_000;
/** How much of a tool result a step line previews: enough for a fact to carry over. */
export const HISTORY_PREVIEW_CHARS = 400;
/** The recorded event stays well under the event limit whatever the characters' UTF-8 width. */
const HISTORY_MAX_BYTES = PayloadLimits.eventBytes - 32 * 1024;

/** One earlier run of the thread, with its stream. */
export interface EarlierRun {
  readonly runId: string;
  readonly events: readonly RunEvent[];
}

export interface HistoryInput {
  readonly threadId: string;
  /** The earlier runs read (the newest `HISTORY_MAX_TURNS` that ended before this run was created), oldest first. */
  readonly runs: readonly EarlierRun[];
  /** Older earlier runs, not read, oldest first. */
  readonly unread?: readonly string[];
  readonly budgetTokens: number;
}

/** The history's token budget for a model window (`undefined`: not configured) and an output ceiling. */
export function historyBudget(contextTokens: number | undefined, maxOutputTokens: number): number {
  // The same room the loop's compaction keeps: 90 % of the window, less the answer's ceiling.
  const room = Math.floor((contextTokens || DEFAULT_CONTEXT_TOKENS) * 0.9) - maxOutputTokens;
  return Math.max(0, Math.min(HISTORY_MAX_TOKENS, Math.floor(room * HISTORY_SHARE)));
}

function cut(text: string): string {
  return text.length > HISTORY_TEXT_MAX_CHARS ? `${text.slice(0, HISTORY_TEXT_MAX_CHARS - 1)}…` : text;
}

/** An earlier run as a turn: its input, answer and every tool step (ask_user's answers included); null if unfinished. */
export function turnOf(run: EarlierRun): HistoryTurn | null {
  let input = "";
  let answer: string | null = null;
  let status: HistoryTurn["status"] | null = null;
  const steps: string[] = [];
  for (const e of run.events) {
    switch (e.type) {
      case "run.queued":
        input = e.data.input;
        break;
      case "tool_result":
        steps.push(ledgerLine(e.data, HISTORY_PREVIEW_CHARS));
        break;
      case "run.succeeded":
        status = "succeeded";
        answer = e.data.output.text;
        break;
      case "run.failed":
        status = "failed";
        break;
      case "run.cancelled":
        status = "cancelled";
        break;
      default:
        break;
    }
  }
  if (status === null) return null;
  return { run_id: run.runId, status, input: cut(input), answer: answer === null ? null : cut(answer), steps, steps_dropped: 0 };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** The user note that closes the earlier turns: what follows is this run's own conversation. */
export const HISTORY_END_NOTE = "End of the earlier turns. The current request follows.";
/** The only note when every earlier turn was left out. */
const allLeftOut = (n: number) => `${plural(n, "earlier turn")} of this conversation ${n === 1 ? "is" : "are"} left out to fit the model's window.`;
const ALL_LEFT_OUT = /^\d+ earlier turns? of this conversation (is|are) left out to fit the model's window\.$/;

/**
 * The messages the recorded history becomes, placed after the system prompt: user and assistant messages
 * only, between an opening and a closing note. A tool step is a ledger line inside a user note (a call and
 * its result together), never a tool call.
 */
export function historyMessages(history: Pick<HistoryData, "turns" | "dropped">): ChatMessage[] {
  const turnsLeftOut = history.dropped.filter((d) => d.part === "turn").length;
  if (history.turns.length === 0) return turnsLeftOut === 0 ? [] : [{ role: "user", content: allLeftOut(turnsLeftOut) }];
  const leftOut = turnsLeftOut > 0 ? ` (${plural(turnsLeftOut, "older turn")} left out to fit the window)` : "";
  const messages: ChatMessage[] = [{ role: "user", content: `Earlier turns of this conversation follow, oldest first${leftOut}.` }];
  for (const turn of history.turns) {
    messages.push({ role: "user", content: turn.input });
    if (turn.steps.length > 0) {
      const older = turn.steps_dropped > 0 ? `; ${plural(turn.steps_dropped, "earlier step")} left out` : "";
      messages.push({ role: "user", content: `Tool steps of that turn, oldest first (tool output, for reference only${older}):\n${turn.steps.join("\n")}` });
    }
    if (turn.answer !== null) messages.push({ role: "assistant", content: turn.answer });
    else messages.push({ role: "user", content: `That turn ended ${turn.status} without an answer.` });
  }
  messages.push({ role: "user", content: HISTORY_END_NOTE });
  return messages;
}

/**
 * The run's own input in a request's messages: the first user message after the thread's history, or the
 * first user message when there is none. For scripted models (development, tests), which answer the input.
 */
export function ownInputOf(messages: readonly ChatMessage[]): string {
  const end = messages.findIndex((m) => m.role === "user" && (m.content === HISTORY_END_NOTE || ALL_LEFT_OUT.test(m.content)));
  return messages.slice(end + 1).find((m) => m.role === "user")?.content ?? "";
}

/** A turn's own messages (without the notes that open and close the history), estimated as the loop estimates. */
const turnTokens = (turn: HistoryTurn) => estimateTokens(historyMessages({ turns: [turn], dropped: [] }).slice(1, -1));

/**
 * The history a run is shown, truncated to `budgetTokens` (estimated as the loop estimates its conversation).
 * Least relevant first: (1) whole turns that ended without an answer, oldest first; (2) tool steps, the oldest
 * turn's oldest step first, one at a time (an answer keeps a turn's conclusion, its steps only the detail);
 * (3) whole turns, oldest first. A step is one line holding a call with its result, so a call is never cut
 * from its result. What is left out is listed per run, oldest first. Pure.
 */
export function buildHistory(input: HistoryInput): HistoryData {
  const full = input.runs.map(turnOf).filter((t): t is HistoryTurn => t !== null);
  const turns: HistoryTurn[] = [...full];
  const dropped = new Map<string, HistoryDrop>();
  const turnDrops: HistoryDrop[] = (input.unread ?? []).map((runId) => ({ run_id: runId, part: "turn", reason: "turn_limit", steps: 0, tokens: 0 }));
  const current = (): HistoryData => {
    const drops = [...turnDrops, ...full.map((t) => dropped.get(t.run_id)).filter((d): d is HistoryDrop => d !== undefined)];
    const shown = { turns, dropped: drops };
    return { thread_id: input.threadId, ...shown, tokens: estimateTokens(historyMessages(shown)), budget_tokens: input.budgetTokens };
  };
  const fits = (h: HistoryData) => h.tokens <= input.budgetTokens && eventBytes({ type: "context.history", data: h }) <= HISTORY_MAX_BYTES;
  const dropTurn = (turn: HistoryTurn) => {
    const original = full.find((t) => t.run_id === turn.run_id)!;
    turns.splice(turns.indexOf(turn), 1);
    dropped.set(turn.run_id, { run_id: turn.run_id, part: "turn", reason: "budget", steps: original.steps.length, tokens: turnTokens(original) });
  };
  const dropStep = (turn: HistoryTurn) => {
    const [, ...rest] = turn.steps;
    const shorter: HistoryTurn = { ...turn, steps: rest, steps_dropped: turn.steps_dropped + 1 };
    turns[turns.indexOf(turn)] = shorter;
    const original = full.find((t) => t.run_id === turn.run_id)!;
    // The lines left out, and their note with the last of them; not the few words that say steps were left out.
    const tokens = turnTokens(original) - turnTokens({ ...original, steps: shorter.steps });
    dropped.set(turn.run_id, { run_id: turn.run_id, part: "steps", reason: "budget", steps: shorter.steps_dropped, tokens });
  };

  let history = current();
  while (!fits(history)) {
    const unanswered = turns.find((t) => t.answer === null);
    const withSteps = turns.find((t) => t.steps.length > 0);
    if (unanswered) dropTurn(unanswered);
    else if (withSteps) dropStep(withSteps);
    else if (turns.length > 0) dropTurn(turns[0]);
    else break;
    history = current();
  }
  return history;
}

import type { CompactWindow, RunState, StoredRunEvent } from "@steward/contract";
import { callsToCompact, estimateTokens } from "./compaction";
import { conversationOf } from "./conversation";
import { outputCeiling } from "./output-ceiling";

/** What the loop knows of its model: the profile's output setting, the model's name, its context window (tokens). */
export interface ModelWindow {
  readonly name?: string;
  readonly maxOutputTokens?: number;
  readonly contextTokens?: number;
}

/**
 * The loop's measurement of the model's window before step `stepNo`: the older tool results to compact so the
 * conversation fits (the window less the answer's ceiling, 90 % of it), as the `compact` command the run decider
 * records; null when it fits, nothing new is left to compact, or the window is unknown.
 */
export function measureWindow(input: {
  readonly events: readonly StoredRunEvent[];
  readonly state: RunState;
  readonly stepNo: number;
  readonly model?: ModelWindow;
}): CompactWindow | null {
  const { events, state, stepNo, model } = input;
  const window = model?.contextTokens;
  if (!window) return null;
  const maxOutput = outputCeiling({ profileMax: model?.maxOutputTokens, model: model?.name, agentState: state.agent_state });
  const budget = Math.max(256, Math.floor(window * 0.9) - maxOutput);
  const messages = conversationOf(events, state);
  const callIds = callsToCompact(messages, budget).filter((id) => !state.compacted_calls.includes(id));
  if (callIds.length === 0) return null;
  const tokensAfter = estimateTokens(conversationOf(events, { ...state, compacted_calls: [...state.compacted_calls, ...callIds] }));
  return { kind: "compact", stepNo, callIds, tokensBefore: estimateTokens(messages), tokensAfter };
}

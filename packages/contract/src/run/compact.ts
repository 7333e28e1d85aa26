import type { CompactWindow } from "./commands";
import type { RunDecision } from "./decision";
import { isTerminal, type RunState } from "./fold";

/**
 * Older results compacted before the model is asked for `stepNo`: the calls not compacted already are
 * recorded (`context.compacted`), and the loop goes on to the model. An ended run records nothing.
 */
export function decideCompaction(command: CompactWindow, state: RunState): RunDecision {
  if (isTerminal(state)) return { events: [], commands: [], effect: { kind: "finished" } };
  const callIds = command.callIds.filter((id) => !state.compacted_calls.includes(id));
  const effect = { kind: "call_model", stepNo: command.stepNo } as const;
  if (callIds.length === 0) return { events: [], commands: [], effect };
  const data = { step_no: command.stepNo, call_ids: callIds, tokens_before: command.tokensBefore, tokens_after: command.tokensAfter };
  return { events: [{ type: "context.compacted", data }], commands: [], effect };
}

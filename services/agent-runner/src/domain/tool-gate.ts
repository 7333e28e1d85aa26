import { Exploration, Limits, ToolResultCode, callFingerprint, confirmationFor, type RequestedToolCall, type RunState } from "@steward/contract";
import { ASK_USER, offeredIn, type ToolCatalog } from "./tool-catalog";

/** What happens to one pending tool call. */
export type CallGate =
  | { readonly kind: "invoke" }
  | { readonly kind: "ask"; readonly question: string; readonly options: readonly string[] }
  | { readonly kind: "wait" }
  | { readonly kind: "answer"; readonly answer: string }
  /** Pause for the user's approval of this exact call, identified by `fingerprint` (`callFingerprint`). */
  | { readonly kind: "request_confirmation"; readonly fingerprint: string }
  | { readonly kind: "refuse"; readonly code: string; readonly note: string; readonly exploration?: boolean };

function askArguments(raw: string): { question: string; options: string[] } | null {
  try {
    const v = JSON.parse(raw) as { question?: unknown; options?: unknown };
    if (typeof v.question !== "string" || !v.question.trim()) return null;
    const options = Array.isArray(v.options) ? v.options.filter((o): o is string => typeof o === "string").slice(0, 8) : [];
    return { question: v.question.slice(0, 2000), options };
  } catch {
    return null;
  }
}

const refuse = (code: string, note: string, exploration = false): CallGate => ({ kind: "refuse", code, note, exploration });

/**
 * The rules of SPEC §4 for one call, in order: questions, the exploration protocol, ask mode, the
 * availability matrix, the exploration budget, confirmation. Pure: decided from the folded run alone.
 */
export function gateCall(state: RunState, call: RequestedToolCall, catalog: ToolCatalog): CallGate {
  if (call.tool_name === ASK_USER) {
    if (call.call_id in state.answers) return { kind: "answer", answer: state.answers[call.call_id] };
    if (state.asked.includes(call.call_id)) return { kind: "wait" };
    const args = askArguments(call.arguments);
    if (!args) return refuse(ToolResultCode.invalidArguments, "ask_user needs a non-empty question");
    if (args.question.includes(Exploration.marker)) {
      return { kind: "ask", question: args.question, options: [Exploration.continueOption, Exploration.stopOption] };
    }
    if (state.exploration_blocked) {
      return refuse(ToolResultCode.explorationBudgetReached, explorationNote);
    }
    return { kind: "ask", ...args };
  }
  const tool = catalog.get(call.tool_name);
  if (!tool) return refuse(ToolResultCode.toolNotAvailable, "this tool does not exist");
  if (state.exploration_blocked) return refuse(ToolResultCode.explorationBudgetReached, explorationNote);
  if (state.mode === "ask" && tool.safety === "write") {
    return refuse(ToolResultCode.askModeDenied, "this run is in ask mode: tools that change anything are not allowed");
  }
  if (!offeredIn(tool, state.agent_state)) {
    return refuse(ToolResultCode.toolNotAvailable, `this tool is not offered in the ${state.agent_state} state`);
  }
  if (tool.exploration && state.exploration_count >= Limits.explorationBudget) {
    return refuse(ToolResultCode.explorationBudgetReached, explorationNote);
  }
  if (tool.requireConfirmation) {
    // Bound to the exact call (step, tool, arguments), never to the id the model chose: the same id with other
    // arguments, or in another step, is another call and is asked for again.
    const fingerprint = callFingerprint(state.step_no, call.tool_name, call.arguments);
    const asked = confirmationFor(state.confirmations, call.call_id, fingerprint);
    if (asked?.decision === "approve") return { kind: "invoke" };
    if (asked?.decision === "reject") return refuse(ToolResultCode.rejectedByUser, "the user rejected this call; do not repeat it");
    if (asked) return { kind: "wait" };
    return { kind: "request_confirmation", fingerprint };
  }
  return { kind: "invoke" };
}

const explorationNote =
  `The exploration budget is spent. Your next tool call must be ask_user with a question containing ${Exploration.marker} ` +
  `and the options "${Exploration.continueOption}" / "${Exploration.stopOption}".`;

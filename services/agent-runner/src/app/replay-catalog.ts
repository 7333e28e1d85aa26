import { RunErrorCode, ToolResultCode, evolve, initialRunState, type StoredRunEvent } from "@steward/contract";
import { ASK_USER, askUserTool, type ToolCatalog, type ToolInfo } from "../domain/tool-catalog";

interface Seen {
  policyPoint: string;
  write: boolean;
  exploration: boolean;
  confirm: boolean;
  notOffered: boolean;
  /** A recorded result of unknown outcome: the tool keeps no record of its calls. */
  noRecord: boolean;
  /** A recorded denial of it failed the run. */
  abortOnDeny: boolean;
  invokedIn: Set<string>;
}

/** Stands for "no agent state": a tool refused as not offered, and never invoked, is offered nowhere. */
const NOWHERE = "(not offered in any recorded state)";

/**
 * The tool catalog as the recording shows it, for a replay that has no tool-exec to ask. Every tool the
 * run named (in a thought, or in an invocation's calls) is registered, except one a recorded 60200 names (it was unknown when the run called it). A
 * flag is set only where the recording shows its effect: write where ask mode refused the tool,
 * exploration where a result was counted as exploration or the budget (not the block) refused it,
 * confirmation where one was required, offered only in the states it ran in where it was refused as not
 * offered, no record where a call of it ended of unknown outcome, abort-on-deny where its denial failed the run. Everything else takes the neutral value, which changes no decision.
 */
export function recordedCatalog(events: readonly StoredRunEvent[]): ToolCatalog {
  const tools = new Map<string, Seen>();
  const unknown = new Set<string>();
  const tool = (name: string): Seen => {
    let seen = tools.get(name);
    if (!seen) {
      seen = {
        policyPoint: "",
        write: false,
        exploration: false,
        confirm: false,
        notOffered: false,
        noRecord: false,
        abortOnDeny: false,
        invokedIn: new Set(),
      };
      tools.set(name, seen);
    }
    return seen;
  };
  let state = initialRunState;
  let previous: StoredRunEvent | undefined;
  for (const e of events) {
    switch (e.type) {
      case "run.queued":
        // An invocation run's calls are asked for here, not by a thought.
        for (const c of e.data.invocation?.calls ?? []) tool(c.tool_name);
        break;
      case "thought":
        for (const c of e.data.tool_calls) tool(c.tool_name);
        break;
      case "tool_call":
        tool(e.data.tool_name).invokedIn.add(state.agent_state);
        break;
      case "tool.decided":
        tool(e.data.tool_name).policyPoint = e.data.policy_point;
        break;
      case "confirmation_required":
        tool(e.data.tool_name).confirm = true;
        break;
      case "tool_result": {
        const t = tool(e.data.tool_name);
        const code = e.data.result_code;
        if (e.data.exploration) t.exploration = true;
        if (code === ToolResultCode.askModeDenied) t.write = true;
        if (code === ToolResultCode.toolNotAvailable) t.notOffered = true;
        if (code === ToolResultCode.explorationBudgetReached && !state.exploration_blocked) t.exploration = true;
        if (code === ToolResultCode.outcomeUnknown && e.data.fingerprint === "") t.noRecord = true;
        break;
      }
      case "run.failed": {
        const { code, tool_name } = e.data.error;
        if (code === RunErrorCode.unknownTool && tool_name) unknown.add(tool_name);
        if (tool_name && previous?.type === "tool_result" && previous.data.tool_name === tool_name && !previous.data.decision.permit) {
          if (code === (Number(previous.data.decision.code) || RunErrorCode.policyDenied)) tool(tool_name).abortOnDeny = true;
        }
        break;
      }
      default:
        break;
    }
    state = evolve(state, e);
    previous = e;
  }
  const catalog = new Map<string, ToolInfo>([[ASK_USER, askUserTool]]);
  for (const [name, t] of tools) {
    if (name === ASK_USER || unknown.has(name)) continue;
    catalog.set(name, {
      name,
      description: "",
      parameters: {},
      safety: t.write ? "write" : "read",
      exploration: t.exploration,
      requireConfirmation: t.confirm,
      abortOnDeny: t.abortOnDeny,
      // Replay takes each result from the recording; only a call found in flight asks whether the tool kept a record.
      idempotent: !t.noRecord,
      policyPoint: t.policyPoint,
      states: t.notOffered ? (t.invokedIn.size > 0 ? [...t.invokedIn] : [NOWHERE]) : [],
      builtIn: false,
    });
  }
  return catalog;
}

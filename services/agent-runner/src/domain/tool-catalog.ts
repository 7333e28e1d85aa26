import type { RunMode } from "@steward/contract";
import type { ToolSchema } from "./model";

/** What the loop knows of a tool: how it may be offered and called (SPEC §5 flags). */
export interface ToolInfo {
  readonly name: string;
  readonly description: string;
  readonly parameters: Record<string, unknown>;
  readonly safety: "read" | "write";
  readonly exploration: boolean;
  readonly requireConfirmation: boolean;
  readonly abortOnDeny: boolean;
  /** Its result is stored by run and fingerprint, so a repeated call is answered, not run again. */
  readonly idempotent: boolean;
  readonly policyPoint: string;
  /** Agent states in which the tool is offered; empty means all. */
  readonly states: readonly string[];
  /** Built into the runner (ask_user) rather than run by tool-exec. */
  readonly builtIn: boolean;
}

export type ToolCatalog = ReadonlyMap<string, ToolInfo>;

export const ASK_USER = "ask_user";

/** The runner's own tool: a question to the user that pauses the run until it is answered. */
export const askUserTool: ToolInfo = {
  name: ASK_USER,
  description:
    "Ask the user a question when you cannot go on without their answer. The run pauses until they answer. " +
    "Offer short options when the answer is a choice.",
  parameters: {
    type: "object",
    properties: {
      question: { type: "string", minLength: 1, maxLength: 2000 },
      options: { type: "array", items: { type: "string", minLength: 1, maxLength: 200 }, maxItems: 8 },
    },
    required: ["question"],
    additionalProperties: false,
  },
  safety: "read",
  exploration: false,
  requireConfirmation: false,
  abortOnDeny: false,
  idempotent: true,
  policyPoint: "",
  states: [],
  builtIn: true,
};

/** Whether a tool is offered in an agent state. */
export function offeredIn(tool: ToolInfo, agentState: string): boolean {
  return tool.states.length === 0 || tool.states.includes(agentState);
}

/**
 * The tool schemas of one iteration: the availability matrix for the agent state, then the mode's ceiling
 * (ask mode never shows a write tool).
 */
export function schemasFor(catalog: ToolCatalog, agentState: string, mode: RunMode): ToolSchema[] {
  return [...catalog.values()]
    .filter((t) => offeredIn(t, agentState))
    .filter((t) => mode !== "ask" || t.safety !== "write")
    .map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }));
}

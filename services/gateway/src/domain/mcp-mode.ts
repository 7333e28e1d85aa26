/**
 * The access modes of an MCP session (docs/mcp.md), chosen by the client on its initialize request and fixed
 * for the session's life. Opening a session in a mode is itself a PDP decision (`agent.mcp.session`).
 */
export const MCP_MODES = ["observe", "execute", "admin"] as const;
export type McpMode = (typeof MCP_MODES)[number];

/** The request header naming the mode on the initialize request (any other request's is ignored). */
export const MCP_MODE_HEADER = "steward-mcp-mode";

/** The tools one session may list and call. */
export type McpToolName =
  | "run_question"
  | "get_run"
  | "answer_question"
  | "approve_call"
  | "knowledge_search"
  | "explore_dataset"
  | "select_workspace"
  | "search_capabilities"
  | "invoke_capability"
  | "list_tenant_runs";

const READING: readonly McpToolName[] = [
  "run_question",
  "get_run",
  "knowledge_search",
  "explore_dataset",
  "select_workspace",
  "search_capabilities",
  "invoke_capability",
];
const WRITING: readonly McpToolName[] = [
  "run_question",
  "get_run",
  "answer_question",
  "approve_call",
  "knowledge_search",
  "explore_dataset",
  "select_workspace",
  "search_capabilities",
  "invoke_capability",
];

/**
 * The fixed catalogue of each mode, in the order tools/list answers. Observe reads and asks read-only
 * questions (its runs are `ask` runs and its invocations read-only capabilities); Execute may also answer a run's
 * question, approve or reject its write and invoke write capabilities (each waiting for a person's approval);
 * Admin holds the Execute catalogue and the tenant-wide capabilities of administrators.
 */
export const MCP_CATALOGUE: Readonly<Record<McpMode, readonly McpToolName[]>> = {
  observe: READING,
  execute: WRITING,
  admin: [...WRITING, "list_tenant_runs"],
};

/**
 * The mode an initialize request asks for: the header's value (one, case-insensitive, surrounding white space
 * ignored), Observe without the header; null when it names no mode (or is sent more than once).
 */
export function parseMcpMode(raw: string | readonly string[] | undefined): McpMode | null {
  if (raw === undefined) return "observe";
  if (typeof raw !== "string") return null;
  const value = raw.trim().toLowerCase();
  return (MCP_MODES as readonly string[]).includes(value) ? (value as McpMode) : null;
}

/** Whether a mode's runs may write: Observe's are `ask` runs whatever the client asks. */
export const mayWrite = (mode: McpMode): boolean => mode !== "observe";

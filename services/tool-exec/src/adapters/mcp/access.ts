import type { McpServerConfig, McpToolAccessConfig } from "./config";

/** The flags Steward gives a mounted MCP tool. */
export interface McpToolAccess {
  readonly safety: "read" | "write";
  readonly requireConfirmation: boolean;
  readonly idempotent: boolean;
}

/** The behaviour hints an MCP server publishes for a tool (MCP `ToolAnnotations`); untrusted. */
export interface McpToolHints {
  readonly readOnlyHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly idempotentHint?: boolean;
  readonly openWorldHint?: boolean;
}

/**
 * The access of one tool from Steward's configuration alone: the tool's entry, else the server's, else the
 * default (write; confirmation required for a write; not idempotent). The server's hints play no part: a
 * server that says "read-only" is not believed until an operator says so.
 */
export function accessOf(server: McpServerConfig, toolName: string): McpToolAccess {
  const tool: McpToolAccessConfig = server.tools && Object.hasOwn(server.tools, toolName) ? server.tools[toolName] : {};
  const safety = tool.safety ?? server.safety ?? "write";
  return {
    safety,
    requireConfirmation: tool.require_confirmation ?? server.require_confirmation ?? safety === "write",
    idempotent: tool.idempotent ?? server.idempotent ?? false,
  };
}

/** The server's hints in words, for an administrator to compare with the configuration; empty when none. */
export function describeHints(hints: McpToolHints | undefined): string {
  if (!hints) return "";
  const words: string[] = [];
  if (hints.readOnlyHint === true) words.push("read-only");
  if (hints.readOnlyHint === false) words.push("not read-only");
  if (hints.destructiveHint === true) words.push("destructive");
  if (hints.destructiveHint === false) words.push("not destructive");
  if (hints.idempotentHint === true) words.push("idempotent");
  if (hints.openWorldHint === true) words.push("open world");
  return words.join(", ");
}

/** Tools the configuration names that the server does not offer (likely a typo an operator should see). */
export function unknownConfiguredTools(server: McpServerConfig, offered: readonly string[]): string[] {
  return Object.keys(server.tools ?? {}).filter((name) => !offered.includes(name));
}

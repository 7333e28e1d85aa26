/**
 * The policy catalogue: every policy point a route or a tool may declare. tool-exec refuses to start when a
 * tool names a point that is not listed here.
 */
export const policyPoints = [
  "agent.run.create",
  "agent.run.read",
  "agent.run.control",
  "agent.run.admin_read",
  "knowledge.document.read",
  "knowledge.document.write",
  "knowledge.proposal.create",
  "knowledge.proposal.review",
  "knowledge.proposal.admin",
  "dataset.read",
  "audit.decision.read",
  "policy.admin",
  "platform.status.read",
  "membership.admin",
  "dataset.admin",
  // Opening an MCP session on the gateway in a mode (resource `Resource::"observe" | "execute" | "admin"`,
  // docs/mcp.md). Not `mcp.<server>.<tool>`: that shape names the tools of mounted MCP servers.
  "agent.mcp.session",
] as const;

/** A tool of a mounted MCP server has its own point: `mcp.<server>.<tool>`. */
export type McpPolicyPoint = `mcp.${string}.${string}`;

export type PolicyPoint = (typeof policyPoints)[number] | McpPolicyPoint;

const MCP_POINT = /^mcp\.[a-z0-9_-]{1,32}\.[A-Za-z0-9_.-]{1,64}$/;

export function isMcpPolicyPoint(value: string): value is McpPolicyPoint {
  return MCP_POINT.test(value);
}

export function isPolicyPoint(value: string): value is PolicyPoint {
  return (policyPoints as readonly string[]).includes(value) || isMcpPolicyPoint(value);
}

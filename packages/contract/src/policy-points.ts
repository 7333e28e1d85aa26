/**
 * The policy catalogue: every policy point a route or a tool may declare. tool-exec refuses to start when a
 * tool names a point that is not listed here.
 */
export const policyPoints = [
  "agent.run.create",
  "agent.run.read",
  "agent.run.control",
  "knowledge.document.read",
  "knowledge.document.write",
  "dataset.read",
  "audit.decision.read",
  "policy.admin",
] as const;

export type PolicyPoint = (typeof policyPoints)[number];

export function isPolicyPoint(value: string): value is PolicyPoint {
  return (policyPoints as readonly string[]).includes(value);
}

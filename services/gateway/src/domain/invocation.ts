import { canonicalJson, type RequestedToolCall, type RunInvocation } from "@steward/contract";
import type { Capability } from "./capability-search";

/** The tool that focuses a dataset: over MCP, select_workspace does it for every dataset-bound invocation. */
export const FOCUS_TOOL = "focus_dataset";

/** The prefix of a capability id that names a tool of tool-exec's catalogue. */
const TOOL_PREFIX = "tool:";

/** The tool a capability id names, or null for an id of another shape. */
export function toolNameOf(capabilityId: string): string | null {
  return capabilityId.startsWith(TOOL_PREFIX) && capabilityId.length > TOOL_PREFIX.length ? capabilityId.slice(TOOL_PREFIX.length) : null;
}

/** A capability that acts on a dataset: it needs the session's selected workspace (WORKSPACE_SELECTION_REQUIRED). */
export const requiresWorkspace = (capability: Capability): boolean => capability.domain === "dataset";

/**
 * The calls of a run that invokes a capability (docs/mcp.md): the capability with the client's arguments, after
 * the focus of the selected workspace when the capability is dataset-bound. Call ids are fixed (`invoke-<n>`), the
 * arguments canonical JSON: the same invocation is the same request (Idempotency-Key) and the same fingerprint.
 */
export function invocationOf(capability: Capability, args: Readonly<Record<string, unknown>>, workspace: string | null): RunInvocation {
  const tool = toolNameOf(capability.id);
  if (tool === null) throw new RangeError(`capability ${capability.id} names no tool`);
  if (requiresWorkspace(capability) && workspace === null) throw new RangeError("a dataset-bound capability needs a selected workspace");
  const target = { tool_name: tool, arguments: canonicalJson(args) };
  const steps = requiresWorkspace(capability) ? [{ tool_name: FOCUS_TOOL, arguments: canonicalJson({ dataset: workspace }) }, target] : [target];
  const calls: RequestedToolCall[] = steps.map((s, i) => ({ call_id: `invoke-${i + 1}`, ...s }));
  return { capability_id: capability.id, calls };
}

/** What an invocation run answered (its output text, written by the runner): the outcome call's code and result. */
export interface InvocationResult {
  readonly capability_id: string;
  readonly result_code: string;
  readonly result: unknown;
}

/** The invocation's result from a succeeded run's answer; null when the answer is not one (not yet, or another run). */
export function invocationResultOf(answer: string | null): InvocationResult | null {
  if (answer === null) return null;
  try {
    const v = JSON.parse(answer) as Partial<InvocationResult> | null;
    return v && typeof v.capability_id === "string" && typeof v.result_code === "string"
      ? { capability_id: v.capability_id, result_code: v.result_code, result: v.result ?? null }
      : null;
  } catch {
    return null;
  }
}

import { foldRun, parseMicros, type RunEvent, type ToolResult } from "@steward/contract";
import type { DecideContext, Observation } from "./decider";
import type { ModelAnswer } from "./model";
import { askUserTool, type ToolCatalog, type ToolInfo } from "./tool-catalog";

/** The decider specs' shared run, tools and observations (test only). */
export const createdAt = "2026-11-30T09:00:00.000000Z";
export const deadline = "2026-11-30T09:03:00.000000Z";

export const tool = (name: string, over: Partial<ToolInfo> = {}): ToolInfo => ({
  name,
  description: "",
  parameters: {},
  safety: "read",
  exploration: false,
  requireConfirmation: false,
  abortOnDeny: false,
  idempotent: true,
  policyPoint: `${name}.point`,
  states: [],
  builtIn: false,
  ...over,
});
export const catalog: ToolCatalog = new Map([
  ["search", tool("search")],
  ["send_mail", tool("send_mail", { safety: "write", idempotent: false })],
  ["refund", tool("refund", { safety: "write", abortOnDeny: true })],
  ["delete_all", tool("delete_all", { safety: "write", requireConfirmation: true })],
  ["ask_user", askUserTool],
]);
export const ctx: DecideContext = { now: parseMicros("2026-11-30T09:01:00.000000Z"), catalog, runnerId: "runner-7" };
export const late: DecideContext = { ...ctx, now: parseMicros(deadline) };

export const queued: RunEvent = {
  type: "run.queued",
  data: { input: "q", mode: "agent", response_language: null, created_by: "u", created_at: createdAt, deadline_at: deadline, thread_id: null },
};
export const started: RunEvent = { type: "run.started", data: { runner_id: "r", started_at: createdAt } };
export const usage = { input_tokens: 3, output_tokens: 2 };
export const thought = (step: number, ...calls: Array<[tool: string, args?: string]>): RunEvent => ({
  type: "thought",
  data: {
    step_no: step,
    text: "",
    tool_calls: calls.map(([name, args], i) => ({ call_id: `c${step}-${i}`, tool_name: name, arguments: args ?? "{}" })),
    usage,
    provider: "primary",
  },
});
export const sent = (step: number, callId: string, name: string, args = "{}"): RunEvent => ({
  type: "tool_call",
  data: { step_no: step, call_id: callId, tool_name: name, arguments: args },
});
export const toolExecSays = (step: number, callId: string, name: string, over: { permit?: boolean; code?: string; resultCode?: string } = {}): ToolResult => ({
  type: "tool_result",
  data: {
    step_no: step,
    call_id: callId,
    tool_name: name,
    fingerprint: `fp-${callId}`,
    decision: { permit: over.permit ?? true, code: over.code ?? "", policy_ids: ["p1"] },
    result_code: over.resultCode ?? "ok",
    result: { rows: 1 },
    evidence: [],
  },
});
export const answer = (over: Partial<ModelAnswer> = {}): ModelAnswer => ({
  text: "",
  toolCalls: [],
  finishReason: "stop",
  usage,
  provider: "primary",
  ...over,
});
export const given = (...events: RunEvent[]) => foldRun([queued, ...events]);
export const nothing: Observation = { kind: "nothing" };
export const types = (events: readonly RunEvent[]) => events.map((e) => e.type);

import { Type, type TObject } from "@sinclair/typebox";
import { isPolicyPoint } from "@steward/contract";
import type { Capability } from "../../domain/capability-search";
import { searchCapabilities } from "../../domain/capability-search";
import { FOCUS_TOOL, invocationOf, invocationResultOf, requiresWorkspace, toolNameOf } from "../../domain/invocation";
import { mayWrite, type McpToolName } from "../../domain/mcp-mode";
import type { RunOutcome } from "../../app/run-outcome";
import { newTraceparent } from "../http/trace-context";
import { approveByElicitation } from "./elicit-approval";
import { FailedAnswer, McpToolFailure, WaitSeconds, closed, waitMsOf, type McpCall, type McpTool, type McpToolDeps } from "./tool";

/** The code of a dataset-bound call in a session that has selected no workspace (docs/mcp.md). */
export const WORKSPACE_SELECTION_REQUIRED = "WORKSPACE_SELECTION_REQUIRED";
/** The code of a write capability invoked in an Observe session, when the policy itself let it through. */
export const OBSERVE_MODE_DENIED = "OBSERVE_MODE_DENIED";

const CapabilityId = Type.String({
  pattern: "^tool:[A-Za-z0-9_.:-]{1,128}$",
  description: "A capability id from search_capabilities, e.g. tool:knowledge_search",
});
const IdempotencyKey = Type.String({
  pattern: "^[\\x21-\\x7e]{1,255}$",
  description: "Makes a retry of the same invocation answer the run created first (as the REST API's Idempotency-Key)",
});

const SearchCapabilities = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: 200, description: 'An English action and object, e.g. "search the knowledge base"' }),
    domain: Type.Optional(Type.String({ pattern: "^[a-z][a-z0-9_-]{0,31}$", description: "Only this domain: knowledge, dataset, mcp, …" })),
  },
  closed,
);
const InvokeCapability = Type.Object(
  {
    capability_id: CapabilityId,
    arguments: Type.Record(Type.String(), Type.Unknown(), { description: "The capability's arguments: an object fitting its input schema" }),
    idempotency_key: Type.Optional(IdempotencyKey),
    wait_seconds: Type.Optional(WaitSeconds),
  },
  closed,
);
const KnowledgeSearch = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: 500, description: "What to look for, in natural language" }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, description: "Passages to return (default 5)" })),
    wait_seconds: Type.Optional(WaitSeconds),
  },
  closed,
);
const ExploreDataset = Type.Object(
  {
    action: Type.Union([Type.Literal("list_tables"), Type.Literal("describe_table"), Type.Literal("validate_query"), Type.Literal("run_query")], {
      description: "list_tables; describe_table (needs table); validate_query or run_query (need sql, one read-only SELECT)",
    }),
    table: Type.Optional(Type.String({ minLength: 1, maxLength: 63 })),
    sql: Type.Optional(Type.String({ minLength: 1, maxLength: 10_000 })),
    wait_seconds: Type.Optional(WaitSeconds),
  },
  closed,
);

/** tool-exec's catalogue, or the client told to try again (10503). */
async function catalogue(call: McpCall<unknown>, deps: McpToolDeps): Promise<Capability[]> {
  try {
    return await deps.capabilities();
  } catch (err) {
    deps.logger.warn({ grpc_code: (err as { code?: number }).code, mcp_session: call.session.id }, "tool-exec's catalogue is unavailable");
    throw new McpToolFailure("10503", "the capability catalogue is unavailable; try again");
  }
}

/** An invocation's answer: the run's essentials with the outcome call's code and result; a failure is `isError`. */
function invocationAnswer(capabilityId: string, outcome: RunOutcome): Record<string, unknown> | FailedAnswer {
  const invoked = outcome.state === "succeeded" ? invocationResultOf(outcome.answer) : null;
  const answer = {
    run_id: outcome.run_id,
    state: outcome.state,
    capability_id: capabilityId,
    result_code: invoked?.result_code ?? null,
    result: invoked?.result ?? null,
    evidence: outcome.evidence,
    error: outcome.error,
    waiting_for: outcome.waiting_for,
    settled: outcome.settled,
  };
  const failed = outcome.state === "failed" || outcome.state === "cancelled" || (invoked !== null && invoked.result_code !== "ok");
  return failed ? new FailedAnswer(answer) : answer;
}

/**
 * Invokes one capability as a Steward run that makes its call without a model (docs/mcp.md): the capability's own
 * policy point is decided for the session first (its safety in the context: the default policy denies an Observe
 * session every write), then the run goes through the runner and tool-exec exactly as a model's call — the same
 * gate, PDP decision, confirmation, idempotency, evidence and audit. A dataset-bound capability needs the session's
 * workspace and runs after its focus.
 */
async function invoke(
  call: McpCall<unknown>,
  deps: McpToolDeps,
  request: { capabilityId: string; args: Record<string, unknown>; waitSeconds?: number; idempotencyKey?: string },
): Promise<unknown> {
  const capability = (await catalogue(call, deps)).find((c) => c.id === request.capabilityId);
  const tool = toolNameOf(request.capabilityId);
  if (!capability || tool === null) throw new McpToolFailure("10050", "no capability has this id; search_capabilities lists them");
  if (tool === FOCUS_TOOL) throw new McpToolFailure("10001", "select_workspace focuses a dataset for this session; invoke the dataset's capabilities after it");
  const workspace = call.state.workspace;
  if (requiresWorkspace(capability) && workspace === null) {
    throw new McpToolFailure(WORKSPACE_SELECTION_REQUIRED, "this capability acts on a dataset: select a workspace with select_workspace first");
  }
  if (!isPolicyPoint(capability.policy_point)) throw new McpToolFailure("10503", "this capability names no policy point Steward knows");
  const verdict = await deps.decide(call.principal, capability.policy_point, { type: "tool", id: tool }, call.session, { toolSafety: capability.route });
  if (!verdict.permit) throw new McpToolFailure(verdict.code, `the policy decision point denied ${capability.policy_point}`);
  if (capability.route === "write" && !mayWrite(call.session.mode)) throw new McpToolFailure(OBSERVE_MODE_DENIED, "an Observe session reads only");
  if (deps.runAllowance) {
    const admitted = await deps.runAllowance(call.principal);
    if (!admitted.admitted) throw new McpToolFailure("10429", `too many requests for ${admitted.scope}; retry after ${admitted.retryAfterSeconds} s`);
  }
  const snapshot = await deps.createRun({
    principal: call.principal,
    body: { input: `invoke_capability ${capability.id}`, mode: mayWrite(call.session.mode) ? "agent" : "ask" },
    ...(request.idempotencyKey !== undefined ? { idempotencyKey: request.idempotencyKey } : {}),
    traceparent: newTraceparent(),
    mcpSessionId: call.session.id,
    mcpMode: call.session.mode,
    invocation: invocationOf(capability, request.args, workspace),
  });
  call.state.started(snapshot.id, workspace);
  const until = Date.now() + waitMsOf(request.waitSeconds);
  const outcome = await deps.follow(call.principal, snapshot.id, {
    waitMs: until - Date.now(),
    signal: call.signal,
    onEvent: call.progress,
    reportFirstRead: true,
  });
  return invocationAnswer(capability.id, await approveByElicitation(call, deps, outcome, until));
}

// Decided as run_question is: an invocation is a run the session's user starts.
const startsRun = () => ({ point: "agent.run.create" as const, resource: { type: "run", id: "" } });

const searchCapabilitiesTool: McpTool<typeof SearchCapabilities> = {
  name: "search_capabilities",
  description:
    "Searches Steward's capabilities (its tools, mounted MCP servers' included) by an English action and object; never runs one. " +
    "Returns stable ids with their input schema's digest, policy point and whether they read or write; invoke_capability runs one.",
  input: SearchCapabilities,
  readOnly: true,
  // Part of the session: decided as the session's own point, on its mode.
  decision: (_args, session) => ({ point: "agent.mcp.session", resource: { type: "resource", id: session.mode } }),
  run: async (call, deps) => ({ capabilities: searchCapabilities(await catalogue(call, deps), { query: call.args.query, domain: call.args.domain }) }),
};

const invokeCapability: McpTool<typeof InvokeCapability> = {
  name: "invoke_capability",
  description:
    "Runs one capability found by search_capabilities, as a Steward run without a model: the same policy, confirmation, idempotency, evidence and audit as the agent's own calls. " +
    "A write waits for a person's approval (waiting_for, approve_call, or the client's own prompt). A dataset capability needs select_workspace first. " +
    "Returns run_id, state, result_code, result, evidence and waiting_for.",
  input: InvokeCapability,
  readOnly: false,
  decision: startsRun,
  run: (call, deps) =>
    invoke(call, deps, {
      capabilityId: call.args.capability_id,
      args: call.args.arguments,
      waitSeconds: call.args.wait_seconds,
      idempotencyKey: call.args.idempotency_key,
    }),
};

const knowledgeSearch: McpTool<typeof KnowledgeSearch> = {
  name: "knowledge_search",
  description:
    "Searches the tenant's knowledge base (capability tool:knowledge_search, as a Steward run): passages with document id, title and score, and the evidence.",
  input: KnowledgeSearch,
  readOnly: true,
  decision: startsRun,
  run: (call, deps) => {
    const { wait_seconds, ...args } = call.args;
    return invoke(call, deps, { capabilityId: "tool:knowledge_search", args, waitSeconds: wait_seconds });
  },
};

const exploreDataset: McpTool<typeof ExploreDataset> = {
  name: "explore_dataset",
  description:
    "Explores the session's selected workspace (select_workspace first): list its tables, describe one, validate or run a read-only query. " +
    "Each is the dataset capability of the same name, as a Steward run.",
  input: ExploreDataset,
  readOnly: true,
  decision: startsRun,
  run: (call, deps) => {
    const { action, table, sql, wait_seconds } = call.args;
    const args = action === "list_tables" ? {} : action === "describe_table" ? { table } : { sql };
    return invoke(call, deps, { capabilityId: `tool:${action}`, args: JSON.parse(JSON.stringify(args)) as Record<string, unknown>, waitSeconds: wait_seconds });
  },
};

/** The capability tools: search, invoke, and the two core capabilities every session lists. */
export const capabilityTools = (): Partial<Record<McpToolName, McpTool>> => ({
  search_capabilities: searchCapabilitiesTool as unknown as McpTool<TObject>,
  invoke_capability: invokeCapability as unknown as McpTool<TObject>,
  knowledge_search: knowledgeSearch as unknown as McpTool<TObject>,
  explore_dataset: exploreDataset as unknown as McpTool<TObject>,
});

import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import type { TObject } from "@sinclair/typebox";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { StoredRunEvent } from "@steward/contract";
import type { Principal } from "../../domain/principal";
import type { McpSessionRef } from "../../app/decide-for-session";
import { MCP_CATALOGUE, type McpMode, type McpToolName } from "../../domain/mcp-mode";
import { adminTools } from "./admin-tools";
import { capabilityTools } from "./capability-tools";
import { runTools } from "./run-tools";
import { createSessionState } from "./session-state";
import { FailedAnswer, failureOf, type Elicit, type McpTool, type McpToolDeps } from "./tool";
import { selectWorkspace } from "./workspace-tool";

export type SessionServerDeps = McpToolDeps;

/** The tools of a mode, in catalogue order: the same for every call of a session. */
export function toolsOf(mode: McpMode): McpTool[] {
  const all: Partial<Record<McpToolName, McpTool>> = {
    ...runTools(mode),
    ...capabilityTools(),
    select_workspace: selectWorkspace as unknown as McpTool,
    ...adminTools(),
  };
  return MCP_CATALOGUE[mode].map((name) => {
    const tool = all[name];
    if (!tool) throw new Error(`no tool ${name}`);
    return tool;
  });
}

const checks = new WeakMap<TObject, TypeCheck<TObject>>();
function checkOf(schema: TObject): TypeCheck<TObject> {
  let check = checks.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    checks.set(schema, check);
  }
  return check;
}

const textResult = (value: unknown, isError = false): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(value) }],
  structuredContent: value as Record<string, unknown>,
  ...(isError ? { isError: true } : {}),
});
const failure = (code: string, message: string): CallToolResult => textResult({ code, message }, true);

/** A progress message for one stored event: its type, and the tool's name where it names one (never text). */
function progressMessage(event: StoredRunEvent): string {
  const tool = (event.data as { tool_name?: unknown }).tool_name;
  return typeof tool === "string" ? `${event.type} ${tool}` : event.type;
}

/**
 * The MCP server of one session: its mode's fixed catalogue, and every call decided by the PDP (naming the
 * session) before anything runs. A tool outside the catalogue is a protocol error (InvalidParams); arguments that
 * do not fit the tool's schema, a deny and a failure are tool results with `isError` and a code.
 */
export function createSessionServer(principal: Principal, session: McpSessionRef, deps: SessionServerDeps): Server {
  const server = new Server({ name: "steward", version: "0.1.0" }, { capabilities: { tools: { listChanged: false } } });
  const tools = toolsOf(session.mode);
  const state = createSessionState();
  const byName = new Map<string, McpTool>(tools.map((t) => [t.name, t]));
  const listed = tools.map((t) => ({
    name: t.name,
    description: t.description,
    inputSchema: JSON.parse(JSON.stringify(t.input)) as { type: "object"; [key: string]: unknown },
    annotations: { readOnlyHint: t.readOnly, openWorldHint: false },
  }));

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `no tool ${JSON.stringify(request.params.name.slice(0, 64))} in this session's catalogue`);
    const args = request.params.arguments ?? {};
    const check = checkOf(tool.input);
    if (!check.Check(args)) {
      const first = check.Errors(args).First();
      return failure("10001", `the arguments are malformed${first?.path ? ` at ${first.path}` : ""}${first ? `: ${first.message}` : ""}`);
    }
    const { point, resource, runId, approvalChannel } = tool.decision(args, session);
    const decision = await deps.decide(principal, point, resource, session, { runId, approvalChannel });
    if (!decision.permit) return failure(decision.code, `the policy decision point denied ${point}`);
    const progressToken = extra._meta?.progressToken;
    const progress = (event: StoredRunEvent) => {
      if (progressToken === undefined) return;
      extra
        .sendNotification({ method: "notifications/progress", params: { progressToken, progress: event.metadata.seq, message: progressMessage(event) } })
        .catch(() => undefined);
    };
    // Elicitation where the client declared it (form mode): a write's approval asked of the person in the client.
    const canElicit = server.getClientCapabilities()?.elicitation !== undefined;
    const elicit: Elicit | undefined = canElicit ? (params) => server.elicitInput(params, { relatedRequestId: extra.requestId }) : undefined;
    try {
      const answer = await tool.run({ args, principal, session, state, signal: extra.signal, progress, ...(elicit ? { elicit } : {}) }, deps);
      return answer instanceof FailedAnswer ? textResult(answer.value, true) : textResult(answer);
    } catch (err) {
      const { code, message } = failureOf(err, deps.logger, session);
      return failure(code, message);
    }
  });
  return server;
}

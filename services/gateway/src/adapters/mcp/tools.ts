import { Type, type Static, type TObject } from "@sinclair/typebox";
import type { PolicyPoint, StoredRunEvent } from "@steward/contract";
import { StewardError, isPostgresUnavailable, type Logger } from "@steward/platform";
import type { Principal } from "../http/auth";
import type { CreateRun } from "../../app/create-run";
import type { RunControls } from "../../app/control-run";
import type { FollowRun, RunOutcome } from "../../app/run-outcome";
import type { Capabilities } from "../../app/capability-catalogue";
import type { McpSessionRef } from "../../app/decide-for-session";
import type { RunCreationAllowance } from "../http/rate-limit/register";
import { searchCapabilities } from "../../domain/capability-search";
import { mayWrite, type McpMode, type McpToolName } from "../../domain/mcp-mode";
import { CreateRunBody, UUID_PATTERN } from "../http/schemas";
import { newTraceparent } from "../http/trace-context";

/** Longest a tool waits for a run to end or to need a person, in seconds: below a client's usual 60 s request timeout. */
export const MAX_WAIT_SECONDS = 50;

const RunId = Type.String({ pattern: UUID_PATTERN.source, description: "The run's id (a UUID)" });
const WaitSeconds = Type.Integer({
  minimum: 0,
  maximum: MAX_WAIT_SECONDS,
  description: `How long to wait for the run to end or to need a person, in seconds (0-${MAX_WAIT_SECONDS}, default ${MAX_WAIT_SECONDS}); get_run goes on waiting`,
});
const closed = { additionalProperties: false } as const;

const RunQuestionExecute = Type.Object(
  {
    input: CreateRunBody.properties.input,
    response_language: CreateRunBody.properties.response_language,
    mode: CreateRunBody.properties.mode,
    thread_id: CreateRunBody.properties.thread_id,
    wait_seconds: Type.Optional(WaitSeconds),
  },
  closed,
);
// Observe: every run is an `ask` run (read-only tools); there is no mode to choose.
const RunQuestionObserve = Type.Object(
  {
    input: CreateRunBody.properties.input,
    response_language: CreateRunBody.properties.response_language,
    thread_id: CreateRunBody.properties.thread_id,
    wait_seconds: Type.Optional(WaitSeconds),
  },
  closed,
);
const GetRun = Type.Object({ run_id: RunId, wait_seconds: Type.Optional(WaitSeconds) }, closed);
const AnswerQuestion = Type.Object(
  { run_id: RunId, answer: Type.String({ minLength: 1, maxLength: 4000, description: "The answer to the question the run asked" }), wait_seconds: Type.Optional(WaitSeconds) },
  closed,
);
const ApproveCall = Type.Object(
  {
    run_id: RunId,
    decision: Type.Union([Type.Literal("approve"), Type.Literal("reject")]),
    fingerprint: Type.String({
      pattern: "^[0-9a-f]{64}$",
      description: "waiting_for.fingerprint of the call shown to the person: an approval is bound to that exact call",
    }),
    wait_seconds: Type.Optional(WaitSeconds),
  },
  closed,
);
const SearchCapabilities = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: 200, description: 'An English action and object, e.g. "search the knowledge base"' }),
    domain: Type.Optional(Type.String({ pattern: "^[a-z][a-z0-9_-]{0,31}$", description: "Only this domain: knowledge, dataset, mcp, …" })),
  },
  closed,
);

/** Everything a tool call may use: the same app functions as the REST routes. */
export interface McpToolDeps {
  readonly createRun: CreateRun;
  readonly controls: RunControls;
  readonly follow: FollowRun;
  readonly capabilities: Capabilities;
  /** The run-creation rate limits (none in unit tests). */
  readonly runAllowance?: RunCreationAllowance;
  readonly logger: Logger;
}

/** One call as a tool sees it. */
export interface McpCall<A> {
  readonly args: A;
  readonly principal: Principal;
  readonly session: McpSessionRef;
  readonly signal: AbortSignal;
  /** Reports one of the run's events to the client as progress (when it asked for progress). */
  readonly progress: (event: StoredRunEvent) => void;
}

/** A tool of the catalogue: its schema, the policy point it is decided on, and what it does once permitted. */
export interface McpTool<S extends TObject = TObject> {
  readonly name: McpToolName;
  readonly description: string;
  readonly input: S;
  readonly readOnly: boolean;
  /** The point and resource the PDP decides the call on (with the session in the context), and the run it names. */
  decision(args: Static<S>, session: McpSessionRef): { point: PolicyPoint; resource: { type: string; id: string }; runId?: string };
  run(call: McpCall<Static<S>>, deps: McpToolDeps): Promise<unknown>;
}

const waitMsOf = (seconds: number | undefined) => (seconds ?? MAX_WAIT_SECONDS) * 1000;

/** A tool failure as a tool result: `isError`, with a code (SPEC §7 where one applies) and a message safe to show. */
export class McpToolFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "McpToolFailure";
  }
}

function runQuestion(mode: McpMode): McpTool {
  const input = mayWrite(mode) ? RunQuestionExecute : RunQuestionObserve;
  return {
    name: "run_question",
    description:
      "Starts a Steward run as you (like POST /v1/agents/runs) and waits for it to end or to need you, reporting its events as progress. " +
      (mayWrite(mode)
        ? "A write tool the run calls waits for approve_call."
        : "In an Observe session the run is an ask run: it reads, it never writes.") +
      " Returns run_id, state, answer, evidence, error and waiting_for.",
    input,
    readOnly: !mayWrite(mode),
    decision: () => ({ point: "agent.run.create", resource: { type: "run", id: "" } }),
    async run(call, deps) {
      const args = call.args as Static<typeof RunQuestionExecute>;
      if (deps.runAllowance) {
        const verdict = await deps.runAllowance(call.principal);
        if (!verdict.admitted) throw new McpToolFailure("10429", `too many requests for ${verdict.scope}; retry after ${verdict.retryAfterSeconds} s`);
      }
      const snapshot = await deps.createRun({
        principal: call.principal,
        body: {
          input: args.input,
          ...(args.response_language !== undefined ? { response_language: args.response_language } : {}),
          mode: mayWrite(call.session.mode) ? (args.mode ?? "agent") : "ask",
          ...(args.thread_id !== undefined ? { thread_id: args.thread_id } : {}),
        },
        traceparent: newTraceparent(),
        mcpSessionId: call.session.id,
      });
      return deps.follow(call.principal, snapshot.id, { waitMs: waitMsOf(args.wait_seconds), signal: call.signal, onEvent: call.progress, reportFirstRead: true });
    },
  };
}

const getRun: McpTool<typeof GetRun> = {
  name: "get_run",
  description: "Reads one of your runs; waits (wait_seconds) for it to end or to need you. Returns run_id, state, answer, evidence, error and waiting_for.",
  input: GetRun,
  readOnly: true,
  decision: (args) => ({ point: "agent.run.read", resource: { type: "run", id: args.run_id }, runId: args.run_id }),
  run: (call, deps) => deps.follow(call.principal, call.args.run_id, { waitMs: waitMsOf(call.args.wait_seconds), signal: call.signal, onEvent: call.progress }),
};

const answerQuestion: McpTool<typeof AnswerQuestion> = {
  name: "answer_question",
  description: "Answers the question your run waits for (waiting_for.kind question), then waits as run_question does.",
  input: AnswerQuestion,
  readOnly: false,
  decision: (args) => ({ point: "agent.run.control", resource: { type: "run", id: args.run_id }, runId: args.run_id }),
  async run(call, deps) {
    await deps.controls.answer(call.principal, call.args.run_id, call.args.answer, newTraceparent());
    return deps.follow(call.principal, call.args.run_id, { waitMs: waitMsOf(call.args.wait_seconds), signal: call.signal, onEvent: call.progress });
  },
};

const approveCall: McpTool<typeof ApproveCall> = {
  name: "approve_call",
  description:
    "Approves or rejects the write your run waits for (waiting_for.kind confirmation), bound to its fingerprint: if the run now waits for another call, nothing is decided (10090). Then waits as run_question does.",
  input: ApproveCall,
  readOnly: false,
  decision: (args) => ({ point: "agent.run.control", resource: { type: "run", id: args.run_id }, runId: args.run_id }),
  async run(call, deps) {
    await deps.controls.confirm(call.principal, call.args.run_id, call.args.decision, newTraceparent(), call.args.fingerprint);
    return deps.follow(call.principal, call.args.run_id, { waitMs: waitMsOf(call.args.wait_seconds), signal: call.signal, onEvent: call.progress });
  },
};

const searchCapabilitiesTool: McpTool<typeof SearchCapabilities> = {
  name: "search_capabilities",
  description:
    "Searches Steward's capabilities (its tools, mounted MCP servers' included) by an English action and object; never runs one. " +
    "Returns stable ids with their input schema's digest, policy point and whether they read or write.",
  input: SearchCapabilities,
  readOnly: true,
  // Part of the session: decided as the session's own point, on its mode.
  decision: (_args, session) => ({ point: "agent.mcp.session", resource: { type: "resource", id: session.mode } }),
  async run(call, deps) {
    let all;
    try {
      all = await deps.capabilities();
    } catch (err) {
      deps.logger.warn({ grpc_code: (err as { code?: number }).code, mcp_session: call.session.id }, "tool-exec's catalogue is unavailable");
      throw new McpToolFailure("10503", "the capability catalogue is unavailable; try again");
    }
    return { capabilities: searchCapabilities(all, { query: call.args.query, domain: call.args.domain }) };
  },
};

/** The tools of a mode, in catalogue order: the same for every call of a session. */
export function toolsOf(mode: McpMode, names: readonly McpToolName[]): McpTool[] {
  const all: Record<McpToolName, McpTool> = {
    run_question: runQuestion(mode),
    get_run: getRun as unknown as McpTool,
    answer_question: answerQuestion as unknown as McpTool,
    approve_call: approveCall as unknown as McpTool,
    search_capabilities: searchCapabilitiesTool as unknown as McpTool,
  };
  return names.map((n) => all[n]);
}

/** The code and message of a failed call: Steward's error codes as text; anything else is internal (and logged). */
export function failureOf(err: unknown, logger: Logger, session: McpSessionRef): { code: string; message: string } {
  if (err instanceof McpToolFailure) return { code: err.code, message: err.message };
  if (err instanceof StewardError && err.status < 500) return { code: String(err.code), message: err.message };
  if (err instanceof StewardError || isPostgresUnavailable(err)) return { code: "10503", message: "temporarily unavailable; try again" };
  const sqlState = (err as { code?: unknown } | null)?.code;
  if (typeof sqlState === "string" && /^22[0-9A-Z]{3}$/.test(sqlState)) return { code: "10430", message: "the call holds a value that cannot be stored" };
  logger.error({ err, mcp_session: session.id }, "MCP tool call failed");
  return { code: "10500", message: "internal error" };
}

export type { RunOutcome };

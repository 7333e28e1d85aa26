import { Type, type Static } from "@sinclair/typebox";
import { mayWrite, type McpMode, type McpToolName } from "../../domain/mcp-mode";
import { CreateRunBody } from "../http/schemas";
import { newTraceparent } from "../http/trace-context";
import { approveByElicitation } from "./elicit-approval";
import { McpToolFailure, RunId, WaitSeconds, closed, waitMsOf, type McpTool } from "./tool";

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
  {
    run_id: RunId,
    answer: Type.String({ minLength: 1, maxLength: 4000, description: "The answer to the question the run asked" }),
    wait_seconds: Type.Optional(WaitSeconds),
  },
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

function runQuestion(mode: McpMode): McpTool {
  const input = mayWrite(mode) ? RunQuestionExecute : RunQuestionObserve;
  return {
    name: "run_question",
    description:
      "Starts a Steward run as you (like POST /v1/agents/runs) and waits for it to end or to need you, reporting its events as progress. " +
      (mayWrite(mode)
        ? "A write tool the run calls waits for a person's approval."
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
        mcpMode: call.session.mode,
      });
      call.state.started(snapshot.id, mayWrite(call.session.mode) ? call.state.workspace : null);
      const until = Date.now() + waitMsOf(args.wait_seconds);
      const outcome = await deps.follow(call.principal, snapshot.id, {
        waitMs: until - Date.now(),
        signal: call.signal,
        onEvent: call.progress,
        reportFirstRead: true,
      });
      return approveByElicitation(call, deps, outcome, until);
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
    "Approves or rejects the write your run waits for (waiting_for.kind confirmation), bound to its fingerprint: if the run now waits for another call, nothing is decided (10090). Then waits as run_question does. " +
    "A write is approved by a person: unless the tenant's policy opens this channel, approve in the console or the REST API instead (the call is denied).",
  input: ApproveCall,
  readOnly: false,
  // The approval's channel goes to the PDP: the default set forbids this one (docs/security.md).
  decision: (args) => ({ point: "agent.run.control", resource: { type: "run", id: args.run_id }, runId: args.run_id, approvalChannel: "mcp_tool" }),
  async run(call, deps) {
    await deps.controls.confirm(call.principal, call.args.run_id, call.args.decision, newTraceparent(), "mcp_tool", call.args.fingerprint);
    return deps.follow(call.principal, call.args.run_id, { waitMs: waitMsOf(call.args.wait_seconds), signal: call.signal, onEvent: call.progress });
  },
};

/** The tools that drive a run: start one, read it, answer its question, approve its write. */
export const runTools = (mode: McpMode): Partial<Record<McpToolName, McpTool>> => ({
  run_question: runQuestion(mode),
  get_run: getRun as unknown as McpTool,
  answer_question: answerQuestion as unknown as McpTool,
  approve_call: approveCall as unknown as McpTool,
});

import type { Evidence, RequestedToolCall, RunError, RunEvent, RunMode, RunInvocation, RunOutput, RunStatus, ToolResult, Usage } from "../events";
import type { IsoMicros } from "../time";
import { Exploration, ToolResultCode } from "../codes";
import { recordDecision, type ConfirmationRecord } from "../confirmations";

/** A run as its events describe it: the snapshot clients read plus where the loop stands. */
export interface RunState {
  readonly status: RunStatus | "new";
  readonly mode: RunMode;
  readonly input: string;
  readonly response_language: string | null;
  readonly created_by: string;
  readonly thread_id: string | null;
  readonly elevation_session_id: string | null;
  readonly created_at: IsoMicros | null;
  readonly started_at: IsoMicros | null;
  readonly finished_at: IsoMicros | null;
  readonly deadline_at: IsoMicros | null;
  readonly output: RunOutput | null;
  readonly error: RunError | null;
  readonly usage: Usage;
  /** Number of events folded so far: the expected version of the next append. */
  readonly version: number;
  /** Number of model calls recorded; the next model call is step `step_no + 1`. */
  readonly step_no: number;
  /** Tool calls the latest thought asked for that have no result yet, in the model's order. */
  readonly pending_calls: readonly RequestedToolCall[];
  /** Pending calls of this step recorded as sent to tool-exec (`tool_call`) that have no result yet. */
  readonly in_flight: readonly string[];
  /** Evidence gathered from tool results, de-duplicated by document. */
  readonly evidence: readonly Evidence[];
  /** Every tool call's outcome in order: the input of cycle detection and of the per-run circuit. */
  readonly tool_history: readonly ToolOutcomeRecord[];
  /** Tools whose circuit opened in this run. */
  readonly open_circuits: readonly string[];
  /** The agent state that decides which tools are offered; moved by state-changing tools. */
  readonly agent_state: string;
  /**
   * What the run waits for while awaiting input or confirmation; for a confirmation, the fingerprint of the
   * exact call shown (absent in runs recorded before approvals were bound).
   */
  readonly awaiting: {
    readonly kind: "input" | "confirmation";
    readonly call_id: string;
    readonly since: IsoMicros;
    readonly fingerprint?: string;
  } | null;
  /** Questions asked (by call) and the answers received. */
  readonly asked: readonly string[];
  readonly answers: Readonly<Record<string, string>>;
  /** Calls shown for confirmation, each bound to its fingerprint, and the user's decisions, in order. */
  readonly confirmations: readonly ConfirmationRecord[];
  readonly cancel_requested: boolean;
  /** Exploration calls since the budget was last reset, and whether the model must ask before going on. */
  readonly exploration_count: number;
  readonly exploration_blocked: boolean;
  /** ask_user calls that carried the exploration marker. */
  readonly exploration_questions: readonly string[];
  /** Text of an answer cut at the output limit, kept while the model continues it, and how often it did. */
  readonly partial_text: string;
  readonly continuations: number;
  /** Tool calls whose results the conversation shows compacted. */
  readonly compacted_calls: readonly string[];
  /** The thread's earlier turns are recorded (`context.history`): a run in a thread loads them once. */
  readonly history_loaded: boolean;
  /** The MCP session the run was started from, and its mode (docs/mcp.md); null otherwise. */
  readonly mcp_session_id: string | null;
  readonly mcp_mode: string | null;
  /** A capability invoked directly (invoke_capability): its calls are pending from the start; no model is asked. */
  readonly invocation: RunInvocation | null;
  /**
   * An invocation run's outcome so far: the first of its calls answered with a code other than ok, else the
   * latest answered; what `run.succeeded` reports. Null outside invocation runs and before the first result.
   */
  readonly invocation_outcome: InvocationOutcome | null;
}

/** One call's answer as an invocation run reports it (`RunState.invocation_outcome`). */
export interface InvocationOutcome {
  readonly call_id: string;
  readonly tool_name: string;
  readonly result_code: string;
  readonly result: unknown;
}

export interface ToolOutcomeRecord {
  readonly tool_name: string;
  readonly fingerprint: string;
  readonly result_code: string;
}

export const initialRunState: RunState = {
  status: "new",
  mode: "agent",
  input: "",
  response_language: null,
  created_by: "",
  thread_id: null,
  elevation_session_id: null,
  created_at: null,
  started_at: null,
  finished_at: null,
  deadline_at: null,
  output: null,
  error: null,
  usage: { input_tokens: 0, output_tokens: 0, model_calls: 0, tool_calls: 0 },
  version: 0,
  step_no: 0,
  pending_calls: [],
  in_flight: [],
  evidence: [],
  tool_history: [],
  open_circuits: [],
  agent_state: "general",
  awaiting: null,
  asked: [],
  answers: {},
  confirmations: [],
  cancel_requested: false,
  exploration_count: 0,
  exploration_blocked: false,
  exploration_questions: [],
  partial_text: "",
  continuations: 0,
  compacted_calls: [],
  history_loaded: false,
  mcp_session_id: null,
  mcp_mode: null,
  invocation: null,
  invocation_outcome: null,
};

function mergeEvidence(known: readonly Evidence[], more: readonly Evidence[]): readonly Evidence[] {
  if (more.length === 0) return known;
  const seen = new Set(known.map((e) => e.document_id));
  const merged = [...known];
  for (const e of more) {
    if (!seen.has(e.document_id)) {
      seen.add(e.document_id);
      merged.push(e);
    }
  }
  return merged;
}

function addModelUsage(usage: Usage, tokens: { input_tokens: number; output_tokens: number }): Usage {
  return {
    ...usage,
    input_tokens: usage.input_tokens + tokens.input_tokens,
    output_tokens: usage.output_tokens + tokens.output_tokens,
    model_calls: usage.model_calls + 1,
  };
}

/** The first answer that was not ok is kept: a failed focus explains the capability's outcome better than what followed. */
function invocationOutcome(known: InvocationOutcome | null, answer: ToolResult["data"]): InvocationOutcome {
  if (known && known.result_code !== ToolResultCode.ok) return known;
  return { call_id: answer.call_id, tool_name: answer.tool_name, result_code: answer.result_code, result: answer.result };
}

/** The pure fold over a run's events. */
export function evolve(state: RunState, event: RunEvent): RunState {
  const next = { ...state, version: state.version + 1 };
  switch (event.type) {
    case "run.queued":
      return {
        ...next,
        status: "queued",
        mode: event.data.mode,
        input: event.data.input,
        response_language: event.data.response_language,
        created_by: event.data.created_by,
        thread_id: event.data.thread_id,
        elevation_session_id: event.data.elevation_session_id ?? null,
        created_at: event.data.created_at,
        deadline_at: event.data.deadline_at,
        mcp_session_id: event.data.mcp_session_id ?? null,
        mcp_mode: event.data.mcp_mode ?? null,
        invocation: event.data.invocation ?? null,
        pending_calls: event.data.invocation?.calls ?? [],
      };
    case "run.started":
      return { ...next, status: "running", started_at: state.started_at ?? event.data.started_at };
    case "thought":
      return {
        ...next,
        partial_text: "",
        continuations: 0,
        step_no: event.data.step_no,
        usage: addModelUsage(state.usage, event.data.usage),
        pending_calls: event.data.tool_calls,
        in_flight: [],
      };
    case "tool_call":
      // Only this step's marker counts: a model may reuse a call id in a later step for another call.
      if (event.data.step_no !== state.step_no || state.in_flight.includes(event.data.call_id)) return next;
      return { ...next, in_flight: [...state.in_flight, event.data.call_id] };
    case "tool.decided":
      return next;
    case "tool_result":
      return {
        ...next,
        usage: { ...state.usage, tool_calls: state.usage.tool_calls + 1 },
        pending_calls: state.pending_calls.filter((c) => c.call_id !== event.data.call_id),
        in_flight: state.in_flight.filter((id) => id !== event.data.call_id),
        evidence: mergeEvidence(state.evidence, event.data.evidence),
        tool_history: [...state.tool_history, { tool_name: event.data.tool_name, fingerprint: event.data.fingerprint, result_code: event.data.result_code }],
        agent_state: event.data.next_state ?? state.agent_state,
        exploration_count: state.exploration_count + (event.data.exploration ? 1 : 0),
        exploration_blocked: state.exploration_blocked || event.data.result_code === ToolResultCode.explorationBudgetReached,
        invocation_outcome: state.invocation ? invocationOutcome(state.invocation_outcome, event.data) : null,
      };
    case "knowledge.proposed":
      return next;
    case "circuit.opened":
      return { ...next, open_circuits: [...state.open_circuits, event.data.tool_name] };
    case "ask_user":
      return {
        ...next,
        status: "awaiting_input",
        awaiting: { kind: "input", call_id: event.data.call_id, since: event.data.asked_at },
        asked: [...state.asked, event.data.call_id],
        exploration_questions: event.data.question.includes(Exploration.marker)
          ? [...state.exploration_questions, event.data.call_id]
          : state.exploration_questions,
      };
    case "input.received":
      return {
        ...next,
        status: "running",
        awaiting: null,
        deadline_at: event.data.deadline_at,
        answers: { ...state.answers, [event.data.call_id]: event.data.answer },
        ...(state.exploration_questions.includes(event.data.call_id)
          ? {
              exploration_blocked: false,
              exploration_count: event.data.answer === Exploration.continueOption ? 0 : state.exploration_count,
            }
          : {}),
      };
    case "confirmation_required": {
      const fingerprint = event.data.fingerprint;
      return {
        ...next,
        status: "awaiting_confirmation",
        awaiting: { kind: "confirmation", call_id: event.data.call_id, since: event.data.asked_at, ...(fingerprint ? { fingerprint } : {}) },
        confirmations: [...state.confirmations, { call_id: event.data.call_id, fingerprint: fingerprint ?? null, decision: null }],
      };
    }
    case "confirmation.decided": {
      const awaited = state.awaiting?.kind === "confirmation" && state.awaiting.call_id === event.data.call_id ? state.awaiting : null;
      return {
        ...next,
        status: "running",
        awaiting: null,
        deadline_at: event.data.deadline_at,
        confirmations: recordDecision(state.confirmations, event.data, awaited?.fingerprint ?? null),
      };
    }
    case "run.cancel_requested":
      return { ...next, cancel_requested: true };
    case "provider.fallback":
      return next;
    case "message":
      return { ...next, step_no: event.data.step_no, usage: addModelUsage(state.usage, event.data.usage) };
    case "message.truncated":
      return {
        ...next,
        step_no: event.data.step_no,
        usage: addModelUsage(state.usage, event.data.usage),
        partial_text: state.partial_text + event.data.text,
        continuations: event.data.continuation,
      };
    case "context.compacted":
      return { ...next, compacted_calls: [...state.compacted_calls, ...event.data.call_ids] };
    case "context.history":
      return { ...next, history_loaded: true };
    case "run.succeeded":
      return { ...next, status: "succeeded", output: event.data.output, finished_at: event.data.finished_at, awaiting: null };
    case "run.failed":
      return { ...next, status: "failed", error: event.data.error, finished_at: event.data.finished_at, awaiting: null };
    case "run.cancelled":
      return { ...next, status: "cancelled", error: event.data.error, finished_at: event.data.finished_at, awaiting: null };
    default: {
      const unknownEvent: never = event;
      throw new TypeError(`unknown run event ${(unknownEvent as { type: string }).type}`);
    }
  }
}

/** Folds a whole stream from the start. */
export function foldRun(events: readonly RunEvent[], from: RunState = initialRunState): RunState {
  return events.reduce(evolve, from);
}

export function isTerminal(state: RunState): boolean {
  return state.status === "succeeded" || state.status === "failed" || state.status === "cancelled";
}

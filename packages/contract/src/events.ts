import type { IsoMicros } from "./time";

/** How a run was asked to behave: `agent` may use write tools, `ask` never does. */
export type RunMode = "agent" | "ask";

/** The lifecycle states of a run (SPEC §2). */
export type RunStatus = "queued" | "running" | "awaiting_input" | "awaiting_confirmation" | "succeeded" | "failed" | "cancelled";

export const terminalStatuses: readonly RunStatus[] = ["succeeded", "failed", "cancelled"];

export interface Usage {
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly model_calls: number;
  readonly tool_calls: number;
}

export interface TokenUsage {
  readonly input_tokens: number;
  readonly output_tokens: number;
}

/** One piece of evidence a tool returned and the answer may cite. */
export interface Evidence {
  readonly document_id: string;
  readonly title: string;
  readonly snippet: string;
  readonly score: number;
}

export interface RunOutput {
  readonly text: string;
  readonly evidence: readonly Evidence[];
}

/** The only fields a run error exposes (SPEC §3). */
export interface RunError {
  readonly code: number;
  readonly message: string;
  readonly tool_name?: string;
  readonly step_no?: number;
  readonly cycle_length?: number;
}

/** A tool call as the model asked for it. `arguments` is the model's raw JSON text. */
export interface RequestedToolCall {
  readonly call_id: string;
  readonly tool_name: string;
  readonly arguments: string;
}

export interface PolicyDecisionFacts {
  readonly permit: boolean;
  readonly code: string;
  readonly policy_ids: readonly string[];
}

export interface RunQueued {
  readonly type: "run.queued";
  readonly data: {
    readonly input: string;
    readonly mode: RunMode;
    readonly response_language: string | null;
    readonly created_by: string;
    readonly created_at: IsoMicros;
    readonly deadline_at: IsoMicros;
    readonly thread_id: string | null;
    /** A reference to an elevation session the creator asked the run to use; checked at every decision. */
    readonly elevation_session_id?: string | null;
    /** The gateway's MCP session the run was started from (run_question, docs/mcp.md); absent otherwise. */
    readonly mcp_session_id?: string;
    /** That session's mode (observe, execute, admin): tool-exec names it in its decisions. */
    readonly mcp_mode?: string;
    /** A capability invoked directly (MCP invoke_capability): the run makes these calls, without a model. */
    readonly invocation?: RunInvocation;
  };
}

/**
 * A capability invoked directly (docs/mcp.md, invoke_capability): the calls a run makes in order, without a
 * model, through the same gate, PDP, confirmation, idempotency and audit as a model's calls. The last call is the
 * capability; a dataset-bound one is preceded by the focus of the session's selected workspace.
 */
export interface RunInvocation {
  /** The capability's stable id (`tool:<name>`). */
  readonly capability_id: string;
  readonly calls: readonly RequestedToolCall[];
}

export interface RunStarted {
  readonly type: "run.started";
  readonly data: { readonly runner_id: string; readonly started_at: IsoMicros };
}

/** A model answer that asks for tools. Recorded before any of its tools runs, so it is never asked again. */
export interface Thought {
  readonly type: "thought";
  readonly data: {
    readonly step_no: number;
    readonly text: string;
    readonly tool_calls: readonly RequestedToolCall[];
    readonly usage: TokenUsage;
    readonly provider: string;
  };
}

/**
 * A tool call about to be sent to tool-exec: the in-flight marker that crash recovery looks for. The
 * fingerprint is tool-exec's (it owns each tool's normalisation) and arrives with the result.
 */
export interface ToolCall {
  readonly type: "tool_call";
  readonly data: {
    readonly step_no: number;
    readonly call_id: string;
    readonly tool_name: string;
    readonly arguments: string;
  };
}

/** The PDP's decision on a tool call, as tool-exec reported it: recorded beside the call for the audit trail. */
export interface ToolDecided {
  readonly type: "tool.decided";
  readonly data: {
    readonly step_no: number;
    readonly call_id: string;
    readonly tool_name: string;
    readonly policy_point: string;
    readonly fingerprint: string;
    readonly permit: boolean;
    readonly code: string;
    readonly policy_ids: readonly string[];
  };
}

/** What the tool call came to: the policy decision, the result code and the controlled result. */
export interface ToolResult {
  readonly type: "tool_result";
  readonly data: {
    readonly step_no: number;
    readonly call_id: string;
    readonly tool_name: string;
    readonly fingerprint: string;
    readonly decision: PolicyDecisionFacts;
    readonly result_code: string;
    readonly result: unknown;
    readonly evidence: readonly Evidence[];
    /** The agent state a state-changing tool moved the run to (e.g. a focused dataset). */
    readonly next_state?: string;
    /** True when the call ran an exploration tool and so counts against the exploration budget. */
    readonly exploration?: boolean;
    /**
     * Where tool-exec's time went, ms on its own clock: the PDP's decision, and the tool's run (0 when replayed
     * or denied). For people reading the run, never the model; absent when tool-exec sent no answer (or the
     * event predates it).
     */
    readonly timings?: { readonly decision_ms: number; readonly tool_ms: number };
  };
}

/** The tool through which the agent proposes a knowledge entry (docs/memory.md). */
export const PROPOSE_KNOWLEDGE_TOOL = "propose_knowledge";

/**
 * The agent's knowledge proposal was queued for a person's review (docs/memory.md): decided from the
 * `propose_knowledge` result it follows, so the run's stream shows every proposal it made.
 */
export interface KnowledgeProposed {
  readonly type: "knowledge.proposed";
  readonly data: { readonly step_no: number; readonly call_id: string; readonly proposal_id: string; readonly title: string };
}

/** The model asked the user a question: the run waits (no runner holds it) until it is answered. */
export interface AskUser {
  readonly type: "ask_user";
  readonly data: {
    readonly step_no: number;
    readonly call_id: string;
    readonly question: string;
    readonly options: readonly string[];
    readonly asked_at: IsoMicros;
  };
}

/** The user answered; the deadline moves by the time the run waited. */
export interface InputReceived {
  readonly type: "input.received";
  readonly data: { readonly call_id: string; readonly answer: string; readonly deadline_at: IsoMicros; readonly answered_at: IsoMicros };
}

/** A tool that requires confirmation was called: the run waits with the exact call shown. */
export interface ConfirmationRequired {
  readonly type: "confirmation_required";
  readonly data: {
    readonly step_no: number;
    readonly call_id: string;
    readonly tool_name: string;
    readonly arguments: string;
    readonly asked_at: IsoMicros;
    /**
     * `callFingerprint` of the call shown (step, tool, canonical arguments): the decision applies to this call
     * only. Absent in runs recorded before approvals were bound; those decisions apply by `call_id`.
     */
    readonly fingerprint?: string;
  };
}

/**
 * Where a person decided a confirmation: `api` is the REST API (the console and the CLI use it); `mcp_tool` an
 * MCP client's `approve_call`; `mcp_elicitation` the MCP client's own prompt. Only `api` is a person's channel
 * in the default policy set (docs/security.md).
 */
export const approvalChannels = ["api", "mcp_tool", "mcp_elicitation"] as const;
export type ApprovalChannel = (typeof approvalChannels)[number];

/** The user approved or rejected the call; the deadline moves by the time the run waited. */
export interface ConfirmationDecided {
  readonly type: "confirmation.decided";
  readonly data: {
    readonly call_id: string;
    readonly decision: "approve" | "reject";
    readonly deadline_at: IsoMicros;
    readonly decided_at: IsoMicros;
    /** The fingerprint of the confirmation decided (absent, like the request's, in runs recorded before). */
    readonly fingerprint?: string;
    /** The channel the decision came through (absent in runs recorded before channels were recorded). */
    readonly channel?: ApprovalChannel;
  };
}

/** The creator asked to stop the run; the driving runner stops within one step. */
export interface CancelRequested {
  readonly type: "run.cancel_requested";
  readonly data: { readonly requested_at: IsoMicros };
}

/** The model stopped at its output limit with text: kept, and the model is asked to continue. */
export interface MessageTruncated {
  readonly type: "message.truncated";
  readonly data: {
    readonly step_no: number;
    readonly text: string;
    readonly usage: TokenUsage;
    readonly provider: string;
    /** 1 for the first continuation request, 2 for the second. */
    readonly continuation: number;
  };
}

/** Older tool results were compacted (key fields kept) so the conversation fits the model's window. */
export interface ContextCompacted {
  readonly type: "context.compacted";
  readonly data: {
    readonly step_no: number;
    readonly call_ids: readonly string[];
    readonly tokens_before: number;
    readonly tokens_after: number;
  };
}

/** One earlier turn of the thread as the model is shown it (context across turns, docs/threads.md). */
export interface HistoryTurn {
  readonly run_id: string;
  /** How the earlier run ended. */
  readonly status: "succeeded" | "failed" | "cancelled";
  /** The user's input of that run (cut to a bound). */
  readonly input: string;
  /** Its final answer's text (cut to a bound); null when it ended without one. */
  readonly answer: string | null;
  /** Its tool steps kept, as step-ledger lines, oldest first; one line is one call with its result. */
  readonly steps: readonly string[];
  /** How many of its tool steps were left out to fit the window (the oldest). */
  readonly steps_dropped: number;
}

/** What the truncation left out of one earlier run. */
export interface HistoryDrop {
  readonly run_id: string;
  /** `turn`: the whole turn (input, answer, steps); `steps`: only that many of its tool steps. */
  readonly part: "turn" | "steps";
  /** `budget`: to fit the token budget; `turn_limit`: older than the newest turns the runner reads. */
  readonly reason: "budget" | "turn_limit";
  /** Tool steps left out (for `turn`, all it had; 0 when it was not read). */
  readonly steps: number;
  /** Estimated tokens left out (0 when it was not read). */
  readonly tokens: number;
}

/**
 * The thread's earlier turns, as loaded once before the run's first model call: what the model is shown
 * (right after the system prompt) and what was dropped to fit its window. Recorded so that a resumed run
 * and a replay show the model exactly the same history.
 */
export interface ContextHistory {
  readonly type: "context.history";
  readonly data: {
    readonly thread_id: string;
    /** Earlier turns kept, oldest first. */
    readonly turns: readonly HistoryTurn[];
    /** What was left out, oldest run first. */
    readonly dropped: readonly HistoryDrop[];
    /** Estimated tokens of the history as shown, and the budget it had to fit. */
    readonly tokens: number;
    readonly budget_tokens: number;
  };
}

/** A provider profile failed and the next one answered. */
export interface ProviderFallback {
  readonly type: "provider.fallback";
  readonly data: { readonly step_no: number; readonly from: string; readonly to: string };
}

/**
 * A tool's circuit opened for the rest of the run after consecutive failures; later calls of it answer
 * 60403 without running. Derived from the tool results, recorded so that replay and audit see it.
 */
export interface CircuitOpened {
  readonly type: "circuit.opened";
  readonly data: { readonly step_no: number; readonly tool_name: string; readonly failures: number };
}

/** The model's final answer text. */
export interface Message {
  readonly type: "message";
  readonly data: {
    readonly step_no: number;
    readonly text: string;
    readonly usage: TokenUsage;
    readonly provider: string;
  };
}

export interface RunSucceeded {
  readonly type: "run.succeeded";
  readonly data: { readonly output: RunOutput; readonly finished_at: IsoMicros };
}

export interface RunFailed {
  readonly type: "run.failed";
  readonly data: { readonly error: RunError; readonly finished_at: IsoMicros };
}

export interface RunCancelled {
  readonly type: "run.cancelled";
  readonly data: { readonly error: RunError; readonly finished_at: IsoMicros };
}

/** Every event a run's stream can hold. */
export type RunEvent =
  | RunQueued
  | RunStarted
  | Thought
  | ToolCall
  | ToolDecided
  | ToolResult
  | KnowledgeProposed
  | CircuitOpened
  | AskUser
  | InputReceived
  | ConfirmationRequired
  | ConfirmationDecided
  | CancelRequested
  | ProviderFallback
  | MessageTruncated
  | ContextCompacted
  | ContextHistory
  | Message
  | RunSucceeded
  | RunFailed
  | RunCancelled;

export type RunEventType = RunEvent["type"];

/** What the store adds to an event when it is appended. */
export interface EventMetadata {
  readonly event_id: string;
  readonly run_id: string;
  readonly tenant_id: string;
  /** 1-based position in the run's stream; the SSE `id:`. */
  readonly seq: number;
  readonly recorded_at: IsoMicros;
  readonly traceparent?: string;
}

export type StoredRunEvent = RunEvent & { readonly metadata: EventMetadata };

import type { ApprovalChannel, RunInvocation, RunMode } from "../events";

/** The run a command names, for the `agent.run.requested` a decision may send. */
export interface RunRef {
  readonly id: string;
  readonly tenantId: string;
}

/** Create the run (the gateway): `run.queued`, then a runner is requested. */
export interface QueueRun {
  readonly kind: "queue";
  readonly run: RunRef;
  readonly input: string;
  readonly mode: RunMode;
  readonly responseLanguage: string | null;
  readonly createdBy: string;
  readonly threadId: string | null;
  readonly elevationSessionId: string | null;
  /** The MCP session that starts the run and its mode (docs/mcp.md); recorded only when given. */
  readonly mcpSessionId?: string;
  readonly mcpMode?: string;
  /** A capability invoked directly: the calls the run makes without a model. */
  readonly invocation?: RunInvocation;
  /** Seconds from creation to the deadline (the limit, 180, unless a deployment's tests shorten it). */
  readonly deadlineSeconds: number;
}

/** What the loop observed (the model, a tool, nothing): decided by the loop's own decider (`DecisionContext.observe`). */
export interface ObserveRun<O> {
  readonly kind: "observe";
  readonly observation: O;
}

/**
 * Record that older tool results are compacted so the conversation fits the model's window. Which calls, and
 * the token counts, are the loop's measurement of its window, read like a model's answer; the decider records
 * the calls not compacted yet and sends the loop on to the model.
 */
export interface CompactWindow {
  readonly kind: "compact";
  readonly stepNo: number;
  readonly callIds: readonly string[];
  readonly tokensBefore: number;
  readonly tokensAfter: number;
}

/** Stop the run (its creator). */
export interface CancelRun {
  readonly kind: "cancel";
}

/** Answer the question the run waits on (its creator). */
export interface AnswerQuestion {
  readonly kind: "answer";
  readonly run: RunRef;
  readonly answer: string;
}

/** Approve or reject the call the run waits to run (its creator, through `channel`). */
export interface DecideConfirmation {
  readonly kind: "confirm";
  readonly run: RunRef;
  readonly decision: "approve" | "reject";
  /** Absent only in runs recorded before the channel was recorded. */
  readonly channel?: ApprovalChannel;
  /** The fingerprint of the call the person was shown: refused when the run now waits for another call. */
  readonly expected?: string;
}

/** End the run once its deadline has passed (the reaper). */
export interface ExpireRun {
  readonly kind: "expire";
}

/** End the run once a question or a confirmation waited `waitMicros` without an answer (the reaper). */
export interface FailUnanswered {
  readonly kind: "unanswered";
  readonly waitMicros: bigint;
}

/** End a run whose stored events cannot be folded (the runner, through the store's projection of the run). */
export interface FailUnfoldable {
  readonly kind: "unfoldable";
}

/**
 * Everything that may write to a run, as one union: each writer (gateway, runner, reaper, store) states what
 * it wants and `decide` says which events that appends. `O` is what the loop observes; writers other than the
 * loop leave it `never`.
 */
export type RunCommand<O = never> =
  QueueRun | ObserveRun<O> | CompactWindow | CancelRun | AnswerQuestion | DecideConfirmation | ExpireRun | FailUnanswered | FailUnfoldable;

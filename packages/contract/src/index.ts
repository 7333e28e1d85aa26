export { Limits, PayloadLimits, eventBytes } from "./limits";
export { RunErrorCode, ToolResultCode, Exploration, ApiErrorCode } from "./codes";
export { formatMicros, parseMicros, addSeconds, nowMicros, type IsoMicros } from "./time";
export { canonicalJson } from "./canonical-json";
export { toolFingerprint, callFingerprint } from "./fingerprint";
export {
  terminalStatuses,
  type RunMode,
  type RunStatus,
  type Usage,
  type TokenUsage,
  type Evidence,
  type RunOutput,
  type RunError,
  type RequestedToolCall,
  type PolicyDecisionFacts,
  type RunEvent,
  type RunEventType,
  type EventMetadata,
  type StoredRunEvent,
  type RunQueued,
  type RunInvocation,
  type RunStarted,
  type Thought,
  type ToolCall,
  type ToolDecided,
  type ToolResult,
  type KnowledgeProposed,
  PROPOSE_KNOWLEDGE_TOOL,
  type CircuitOpened,
  type AskUser,
  type InputReceived,
  type ConfirmationRequired,
  type ConfirmationDecided,
  approvalChannels,
  type ApprovalChannel,
  type CancelRequested,
  type ProviderFallback,
  type MessageTruncated,
  type ContextCompacted,
  type ContextHistory,
  type HistoryTurn,
  type HistoryDrop,
  type Message,
  type RunSucceeded,
  type RunFailed,
  type RunCancelled,
} from "./events";
export { snapshotOf, type RunSnapshot } from "./snapshot";
export { evolve, foldRun, isTerminal, initialRunState, type RunState, type ToolOutcomeRecord } from "./run/fold";
export { decide, type DecisionContext, type ObservationDecider } from "./run/decide";
export type {
  RunCommand,
  RunRef,
  QueueRun,
  ObserveRun,
  CompactWindow,
  CancelRun,
  AnswerQuestion,
  DecideConfirmation,
  ExpireRun,
  FailUnanswered,
  FailUnfoldable,
} from "./run/commands";
export type { RunDecision, RunEffect, LoopEffect, WriterEffect } from "./run/decision";
export { requestRun } from "./run/run-request";
export { deadlineFailure, unansweredFailure } from "./run/deadline";
export { runFailed, runCancelled, unfoldableError } from "./run/endings";
export type { ThreadEvent, ThreadEventType, ThreadCreated, ThreadForked, ThreadOrigin, ThreadRunAdded, ThreadArchived } from "./thread-events";
export { evolveThread, foldThread, initialThreadState, threadSnapshotOf, type ThreadState, type ThreadSnapshot } from "./thread-fold";
export { confirmationFor, recordDecision, type ConfirmationRecord } from "./confirmations";
export { detectCycle, consecutiveFailures, type Cycle } from "./tool-history";
export {
  RunRequestedSchema,
  decodeRunRequested,
  runRequestedMessage,
  NEW_RUN_HEADER,
  type RunRequested,
  type RunRequestedMessage,
  type RunRequest,
  type RequestPurpose,
  type DecodeResult,
} from "./run-requested";
export { policyPoints, isPolicyPoint, isMcpPolicyPoint, type PolicyPoint, type McpPolicyPoint } from "./policy-points";
export { busNames, type BusNames } from "./subjects";
export { DATASET_NAME } from "./dataset-name";
export { createSseParser, type SseEvent } from "./sse";
export type {
  Page,
  ThreadView,
  ProposalStatus,
  KnowledgeProposal,
  DecisionRecord,
  McpSessionRecord,
  AdminRunView,
  StoredEventView,
  EventPage,
  DocumentSummary,
} from "./wire";

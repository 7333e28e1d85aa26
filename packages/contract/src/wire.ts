import type { RunSnapshot } from "./snapshot";
import type { ThreadSnapshot } from "./thread-fold";

// The REST API's answers as its clients read them (docs/api.md, docs/openapi.json): the CLI and the console take
// these types from here, so that a field added or renamed is one edit, checked everywhere it is read.

/** A numbered page of a list: `GET /v1/agents/runs`, `/v1/threads`, `/v1/knowledge/proposals`, … */
export interface Page<T> {
  readonly items: readonly T[];
  readonly page: number;
  readonly page_size: number;
  readonly total: number;
}

/** A thread; `runs` (oldest first, a fork's inherited runs included) only from `GET /v1/threads/:id`. */
export interface ThreadView extends ThreadSnapshot {
  readonly runs?: readonly RunSnapshot[];
}

/** Where a proposal stands: queued for review, made a document, or set aside. Only `applied` is ever used. */
export type ProposalStatus = "pending" | "applied" | "dismissed";

/** A knowledge proposal (docs/memory.md); timestamps ISO-8601 UTC with microseconds. */
export interface KnowledgeProposal {
  readonly id: string;
  readonly title: string;
  readonly content: string;
  readonly evidence_quote: string | null;
  readonly status: ProposalStatus;
  readonly thread_id: string | null;
  readonly run_id: string;
  readonly step_no: number;
  /** The run's creator, on whose behalf the agent proposed. */
  readonly proposed_by: string;
  readonly created_at: string;
  readonly decided_at: string | null;
  readonly decided_by: string | null;
  /** The document applying it made (null until applied, or once that document is deleted). */
  readonly document_id: string | null;
}

/** One record of the decision log (`GET /v1/audit/decisions`). */
export interface DecisionRecord {
  readonly id: number;
  readonly decided_at: string;
  readonly user_id: string;
  readonly action: string;
  readonly resource: { readonly type: string; readonly id: string };
  readonly run_id: string | null;
  readonly step_no: number | null;
  readonly fingerprint: string | null;
  readonly elevation_session_id: string | null;
  /** The MCP session the decision was made for (docs/mcp.md); null outside MCP. */
  readonly mcp_session_id: string | null;
  /** That session's mode: observe, execute or admin. */
  readonly mcp_mode: string | null;
  readonly permit: boolean;
  readonly code: string | null;
  readonly policy_ids: readonly string[];
  readonly policy_version: number | null;
  readonly latency_ms: number;
}

/** A recorded MCP session (`GET /v1/audit/mcp-sessions`). */
export interface McpSessionRecord {
  readonly id: string;
  readonly user_id: string;
  readonly mode: "observe" | "execute" | "admin";
  readonly opened_at: string;
  /** Null while open. */
  readonly closed_at: string | null;
  /** Why it closed, in the gateway's words; null while open. */
  readonly close_reason: string | null;
}

/** A run as the admins' view answers it (`GET /v1/admin/runs`): the snapshot, whose it is and its thread. */
export interface AdminRunView extends RunSnapshot {
  readonly created_by: string;
  readonly thread_id: string | null;
}

/** A stored event of a run as the API serves it (`GET /v1/agents/runs/:id/events`, the admins' alike). */
export interface StoredEventView {
  readonly seq: number;
  readonly type: string;
  readonly data: Record<string, unknown>;
  readonly recorded_at: string;
}

/** A page of a run's events after a sequence number. */
export interface EventPage {
  readonly items: readonly StoredEventView[];
  readonly next_after: number;
  readonly has_more: boolean;
}

/** A knowledge document as lists show it (`GET /v1/knowledge/documents`); timestamps ISO-8601 UTC. */
export interface DocumentSummary {
  readonly id: string;
  readonly title: string;
  readonly chunks: number;
  readonly chars: number;
  readonly created_at: string;
}

/** Where a proposal stands: queued for review, made a document, or set aside. Only `applied` is ever used. */
export type ProposalStatus = "pending" | "applied" | "dismissed";

/** A knowledge proposal as the API shows it (docs/memory.md); timestamps ISO-8601 UTC with microseconds. */
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

/**
 * The limits a new proposal must stay within (SPEC §9: 2 per run, 5 pending per thread); a run outside any thread
 * counts against its creator's pending proposals outside threads instead.
 */
export interface ProposalLimits {
  readonly perRun: number;
  readonly pendingPerThread: number;
  readonly pendingPerMemberOutsideThreads: number;
}

/** Something that runs SQL and returns rows: a pool, or a client inside a transaction the caller owns. */
export interface SqlQuery {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

export const PROPOSAL_COLUMNS = `id::text, title, content, evidence_quote, status, thread_id::text, run_id::text, step_no, proposed_by,
  created_at, decided_at, decided_by, document_id::text`;

import type { KnowledgeProposal, ProposalStatus } from "@steward/contract";

export type { KnowledgeProposal, ProposalStatus };

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

import { pageOf } from "./page";

/** Whose proposals a list covers: the caller's own (default), or the whole tenant's (knowledge.proposal.admin). */
export type ProposalScope = "own" | "tenant";

export type ProposalStatusFilter = "pending" | "applied" | "dismissed";

/** GET /v1/knowledge/proposals, as the route's schema let it through (strings, each key at most once). */
export interface ProposalListQuery {
  readonly status?: ProposalStatusFilter;
  readonly thread_id?: string;
  readonly scope?: ProposalScope;
  readonly page?: string;
  readonly page_size?: string;
}

export interface ProposalListRequest {
  readonly scope: ProposalScope;
  readonly status?: ProposalStatusFilter;
  readonly threadId?: string;
  readonly page: number;
  readonly pageSize: number;
}

/** The list request with its defaults: the caller's own proposals, page 1 of 20. */
export function proposalListRequest(query: ProposalListQuery): ProposalListRequest {
  return {
    scope: query.scope ?? "own",
    status: query.status,
    threadId: query.thread_id,
    ...pageOf(query),
  };
}

/**
 * Whether deciding a proposal needs the admin point: a proposal is the caller's own when it was made in one
 * of their runs (runs and threads are creator-only, so its thread is theirs too).
 */
export const needsAdmin = (proposal: { readonly proposed_by: string }, caller: { readonly userId: string }): boolean => proposal.proposed_by !== caller.userId;

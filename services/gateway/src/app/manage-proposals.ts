import { ConflictError, ForbiddenError, NotFoundError } from "@steward/platform";
import type { KnowledgeProposal } from "@steward/store";
import { needsAdmin, type ProposalListRequest } from "../domain/proposal-request";
import type { Principal } from "../domain/principal";
import type { Authorize } from "./authorize";
import type { ProposalStore } from "./ports";

/** The resource the proposal points are asked about (the routes' and the admin check's). */
export const PROPOSALS_RESOURCE = { type: "resource", id: "knowledge-proposals" } as const;

/** Knowledge proposals as people review them (docs/memory.md): the caller's own, or the tenant's with the admin point. */
export interface Proposals {
  /** A page of proposals, newest first. `tenant` scope asks the PDP for knowledge.proposal.admin (a deny is 403). */
  list(caller: Principal, request: ProposalListRequest, traceparent?: string): Promise<{ items: KnowledgeProposal[]; total: number }>;
  /**
   * Applies (it becomes a knowledge document with its provenance) or dismisses a pending proposal. Another
   * user's needs knowledge.proposal.admin: without it, it is 404 exactly like one that does not exist. A
   * proposal already decided is 409.
   */
  decide(caller: Principal, proposalId: string, decision: "apply" | "dismiss", traceparent?: string): Promise<KnowledgeProposal>;
}

const notFound = () => new NotFoundError("proposal not found");

export function createProposals(deps: { proposals: ProposalStore; authorize: Authorize }): Proposals {
  /** Whether the PDP lets the caller act on any proposal of the tenant; an unreachable PDP still throws (503). */
  async function isAdmin(caller: Principal, traceparent?: string): Promise<boolean> {
    try {
      await deps.authorize(caller, "knowledge.proposal.admin", PROPOSALS_RESOURCE, traceparent);
      return true;
    } catch (err) {
      if (err instanceof ForbiddenError) return false;
      throw err;
    }
  }

  return {
    async list(caller, request, traceparent) {
      if (request.scope === "tenant") await deps.authorize(caller, "knowledge.proposal.admin", PROPOSALS_RESOURCE, traceparent);
      return deps.proposals.list(
        { tenantId: caller.tenantId, proposedBy: request.scope === "tenant" ? null : caller.userId, status: request.status, threadId: request.threadId },
        { page: request.page, pageSize: request.pageSize },
      );
    },
    async decide(caller, proposalId, decision, traceparent) {
      // Whose it is never changes: checked before the transaction, so the PDP is never asked while a row is locked.
      const found = await deps.proposals.find(caller.tenantId, proposalId);
      if (!found) throw notFound();
      const asAdmin = needsAdmin(found, caller);
      if (asAdmin && !(await isAdmin(caller, traceparent))) throw notFound();
      const outcome = await deps.proposals.decide({
        tenantId: caller.tenantId,
        proposalId,
        proposedBy: asAdmin ? null : caller.userId,
        decidedBy: caller.userId,
        decision,
      });
      switch (outcome.kind) {
        case "decided":
          return outcome.proposal;
        case "not_found":
          throw notFound();
        case "not_pending":
          throw new ConflictError(`the proposal is ${outcome.proposal.status}, not pending`);
        default: {
          const unreachable: never = outcome;
          throw new TypeError(`unknown outcome ${JSON.stringify(unreachable)}`);
        }
      }
    },
  };
}

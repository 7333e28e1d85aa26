import type { Pool } from "@steward/platform";
import { decideProposal, findProposal, listProposals } from "@steward/store";
import type { ProposalStore } from "../../app/ports";

/** Knowledge proposals in PostgreSQL; an applied one becomes a document in the same transaction. */
export function createPgProposalStore(pool: Pool): ProposalStore {
  return {
    list: (filter, page) => listProposals(pool, filter, page),
    find: (tenantId, id) => findProposal(pool, tenantId, id),
    decide: (input) => decideProposal(pool, input),
  };
}

import type { Pool } from "pg";
import { inTransaction } from "@steward/platform";
import { insertDocument } from "../knowledge/add-document";
import { PROPOSAL_COLUMNS, type KnowledgeProposal } from "./proposal";

export interface DecideProposalInput {
  readonly tenantId: string;
  readonly proposalId: string;
  /** Only a proposal made for this user may be decided; null for any of the tenant (an admin's decision). */
  readonly proposedBy: string | null;
  readonly decidedBy: string;
  /** `apply` makes it a knowledge document (with its provenance); `dismiss` sets it aside for good. */
  readonly decision: "apply" | "dismiss";
}

export type DecideProposalOutcome =
  | { readonly kind: "decided"; readonly proposal: KnowledgeProposal }
  | { readonly kind: "not_found" }
  | { readonly kind: "not_pending"; readonly proposal: KnowledgeProposal };

/**
 * Applies or dismisses a pending proposal, race-free: one transaction locks its row, checks it is still
 * pending, adds the document (apply: title and content, chunked for search like any other, with the thread,
 * run, step and proposal it came from) and records the decision, who made it and when. Of two concurrent
 * decisions the second waits for the first's commit and finds the proposal no longer pending.
 */
export async function decideProposal(pool: Pool, input: DecideProposalInput): Promise<DecideProposalOutcome> {
  return inTransaction(pool, async (client) => {
    const { rows } = await client.query<KnowledgeProposal>(
      `SELECT ${PROPOSAL_COLUMNS} FROM knowledge_proposals
        WHERE tenant_id = $1 AND id = $2 AND ($3::text IS NULL OR proposed_by = $3) FOR UPDATE`,
      [input.tenantId, input.proposalId, input.proposedBy],
    );
    const found = rows[0];
    if (!found) return { kind: "not_found" };
    if (found.status !== "pending") return { kind: "not_pending", proposal: found };
    const documentId =
      input.decision === "apply"
        ? await insertDocument(client, {
            tenantId: input.tenantId,
            title: found.title,
            body: found.content,
            provenance: { threadId: found.thread_id, runId: found.run_id, stepNo: found.step_no, proposalId: found.id },
          })
        : null;
    const decided = await client.query<KnowledgeProposal>(
      `UPDATE knowledge_proposals SET status = $3, decided_at = clock_timestamp(), decided_by = $4, document_id = $5
        WHERE tenant_id = $1 AND id = $2 RETURNING ${PROPOSAL_COLUMNS}`,
      [input.tenantId, input.proposalId, input.decision === "apply" ? "applied" : "dismissed", input.decidedBy, documentId],
    );
    return { kind: "decided", proposal: decided.rows[0] };
  });
}

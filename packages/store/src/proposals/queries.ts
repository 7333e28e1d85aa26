import type { Pool } from "pg";
import { PROPOSAL_COLUMNS, type KnowledgeProposal, type ProposalStatus } from "./proposal";

export interface ProposalFilter {
  readonly tenantId: string;
  /** Only the proposals made for this user (the caller's own); null for every proposal of the tenant. */
  readonly proposedBy: string | null;
  readonly status?: ProposalStatus;
  readonly threadId?: string;
}

/** One page of a tenant's proposals (or one user's), newest first, with the total. */
export async function listProposals(
  pool: Pool,
  filter: ProposalFilter,
  page: { page: number; pageSize: number },
): Promise<{ items: KnowledgeProposal[]; total: number }> {
  const where = ["tenant_id = $1", "($2::text IS NULL OR proposed_by = $2)", "($3::text IS NULL OR status = $3)", "($4::uuid IS NULL OR thread_id = $4)"].join(
    " AND ",
  );
  const values = [filter.tenantId, filter.proposedBy, filter.status ?? null, filter.threadId ?? null];
  const [items, total] = await Promise.all([
    pool.query<KnowledgeProposal>(`SELECT ${PROPOSAL_COLUMNS} FROM knowledge_proposals WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $5 OFFSET $6`, [
      ...values,
      page.pageSize,
      (page.page - 1) * page.pageSize,
    ]),
    pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM knowledge_proposals WHERE ${where}`, values),
  ]);
  return { items: items.rows, total: total.rows[0].n };
}

/** A proposal of the tenant, or null. */
export async function findProposal(pool: Pool, tenantId: string, id: string): Promise<KnowledgeProposal | null> {
  const { rows } = await pool.query<KnowledgeProposal>(`SELECT ${PROPOSAL_COLUMNS} FROM knowledge_proposals WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
  return rows[0] ?? null;
}

import type { Pool } from "pg";

import type { DocumentSummary } from "@steward/contract";

export type { DocumentSummary };

/** A whole document, as it was added. */
export interface KnowledgeDocument extends DocumentSummary {
  readonly body: string;
  /** Where it came from when it was made by applying a knowledge proposal (docs/memory.md); null otherwise. */
  readonly provenance: { thread_id: string | null; run_id: string; step_no: number; proposal_id: string } | null;
}

/** A tenant's document; null when the tenant has no such document. */
export async function readDocument(pool: Pool, tenantId: string, id: string): Promise<KnowledgeDocument | null> {
  const { rows } = await pool.query<KnowledgeDocument>(
    `SELECT d.id::text AS id, d.title, d.body, length(d.body) AS chars, d.created_at,
            (SELECT count(*)::int FROM kb_chunks c WHERE c.document_id = d.id) AS chunks,
            CASE WHEN d.proposal_id IS NULL THEN NULL ELSE json_build_object(
              'thread_id', d.thread_id::text, 'run_id', d.run_id::text, 'step_no', d.step_no, 'proposal_id', d.proposal_id::text) END AS provenance
       FROM kb_documents d WHERE d.tenant_id = $1 AND d.id = $2`,
    [tenantId, id],
  );
  return rows[0] ?? null;
}

/** One page of a tenant's documents, newest first, with the total. */
export async function listDocuments(
  pool: Pool,
  tenantId: string,
  page: { page: number; pageSize: number },
): Promise<{ items: DocumentSummary[]; total: number }> {
  const [items, total] = await Promise.all([
    pool.query<DocumentSummary>(
      `SELECT d.id::text AS id, d.title, length(d.body) AS chars, d.created_at,
              (SELECT count(*)::int FROM kb_chunks c WHERE c.document_id = d.id) AS chunks
         FROM kb_documents d WHERE d.tenant_id = $1
        ORDER BY d.created_at DESC, d.id DESC LIMIT $2 OFFSET $3`,
      [tenantId, page.pageSize, (page.page - 1) * page.pageSize],
    ),
    pool.query<{ n: number }>("SELECT count(*)::int AS n FROM kb_documents WHERE tenant_id = $1", [tenantId]),
  ]);
  return { items: items.rows, total: total.rows[0].n };
}

/** Deletes a tenant's document (its chunks go with it); false when the tenant has no such document. */
export async function deleteDocument(pool: Pool, tenantId: string, id: string): Promise<boolean> {
  const r = await pool.query("DELETE FROM kb_documents WHERE tenant_id = $1 AND id = $2", [tenantId, id]);
  return r.rowCount === 1;
}

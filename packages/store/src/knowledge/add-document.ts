import type { Pool } from "pg";
import { ConflictError, inTransaction, timeOrderedId } from "@steward/platform";
import { chunkText } from "./chunk";

export interface NewDocument {
  readonly tenantId: string;
  readonly title: string;
  readonly body: string;
  readonly id?: string;
  /** Where a document made from an applied knowledge proposal came from (docs/memory.md); absent otherwise. */
  readonly provenance?: DocumentProvenance;
}

/** The thread (if any), run, step and proposal a document was proposed in. */
export interface DocumentProvenance {
  readonly threadId: string | null;
  readonly runId: string;
  readonly stepNo: number;
  readonly proposalId: string;
}

/** Something that runs SQL: a pool's client inside a transaction the caller owns. */
export interface SqlRunner {
  query(text: string, values?: unknown[]): Promise<unknown>;
}

/**
 * The most documents one tenant's knowledge base holds: the database's disk is every tenant's, and documents come
 * from the API, applied proposals and save_note alike (docs/security.md).
 */
export const KNOWLEDGE_DOCUMENTS_PER_TENANT = 10_000;

/** The tenant's knowledge base is full: nothing was stored (409 / 10090 over HTTP). */
export class KnowledgeFullError extends ConflictError {
  constructor(readonly max: number) {
    super(`the tenant's knowledge base holds ${max} documents, as many as it may; delete one first`);
    this.name = "KnowledgeFullError";
  }
}

/** Stores a document of a tenant's knowledge base and its chunks; returns the document id. */
export async function addDocument(pool: Pool, doc: NewDocument, max = KNOWLEDGE_DOCUMENTS_PER_TENANT): Promise<string> {
  return inTransaction(pool, (client) => insertDocument(client, doc, max));
}

/**
 * The same, inside a transaction the caller owns (it commits the document with whatever else it writes). The
 * tenant's documents are counted under a lock of the tenant's, held to the commit, so that concurrent writers
 * never take the knowledge base past `max`; a full one throws KnowledgeFullError before anything is written.
 */
export async function insertDocument(tx: SqlRunner, doc: NewDocument, max = KNOWLEDGE_DOCUMENTS_PER_TENANT): Promise<string> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtextextended('kb_documents/' || $1, 0))", [doc.tenantId]);
  const held = (await tx.query("SELECT count(*)::int AS n FROM kb_documents WHERE tenant_id = $1", [doc.tenantId])) as { rows: Array<{ n: number }> };
  if (held.rows[0].n >= max) throw new KnowledgeFullError(max);
  const id = doc.id ?? timeOrderedId();
  const from = doc.provenance;
  await tx.query("INSERT INTO kb_documents (id, tenant_id, title, body, thread_id, run_id, step_no, proposal_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)", [
    id,
    doc.tenantId,
    doc.title,
    doc.body,
    from?.threadId ?? null,
    from?.runId ?? null,
    from?.stepNo ?? null,
    from?.proposalId ?? null,
  ]);
  await tx.query(
    `INSERT INTO kb_chunks (document_id, ord, tenant_id, content)
     SELECT $1, ord, $2, content FROM unnest($3::text[]) WITH ORDINALITY AS c(content, ord)`,
    [id, doc.tenantId, chunkText(doc.body)],
  );
  return id;
}

import type { Pool } from "pg";
import { inTransaction, timeOrderedId } from "@steward/platform";
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

/** Stores a document of a tenant's knowledge base and its chunks; returns the document id. */
export async function addDocument(pool: Pool, doc: NewDocument): Promise<string> {
  return inTransaction(pool, (client) => insertDocument(client, doc));
}

/** The same, inside a transaction the caller owns (it commits the document with whatever else it writes). */
export async function insertDocument(tx: SqlRunner, doc: NewDocument): Promise<string> {
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

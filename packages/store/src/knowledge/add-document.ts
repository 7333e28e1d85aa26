import { randomUUID } from "node:crypto";
import type { Pool } from "pg";
import { inTransaction } from "@steward/platform";
import { chunkText } from "./chunk";

/** Stores a document of a tenant's knowledge base and its chunks; returns the document id. */
export async function addDocument(
  pool: Pool,
  doc: { tenantId: string; title: string; body: string; id?: string },
): Promise<string> {
  const id = doc.id ?? randomUUID();
  const chunks = chunkText(doc.body);
  await inTransaction(pool, async (client) => {
    await client.query("INSERT INTO kb_documents (id, tenant_id, title, body) VALUES ($1, $2, $3, $4)", [
      id,
      doc.tenantId,
      doc.title,
      doc.body,
    ]);
    await client.query(
      `INSERT INTO kb_chunks (document_id, ord, tenant_id, content)
       SELECT $1, ord, $2, content FROM unnest($3::text[]) WITH ORDINALITY AS c(content, ord)`,
      [id, doc.tenantId, chunks],
    );
  });
  return id;
}

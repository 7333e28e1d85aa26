import type { Pool } from "@steward/platform";
import { addDocument, deleteDocument, listDocuments, readDocument } from "@steward/store";
import type { KnowledgeStore } from "../../app/ports";

/** A tenant's knowledge documents and their chunks in PostgreSQL. */
export function createPgKnowledgeStore(pool: Pool): KnowledgeStore {
  return {
    add: (doc) => addDocument(pool, doc),
    list: (tenantId, page) => listDocuments(pool, tenantId, page),
    read: (tenantId, id) => readDocument(pool, tenantId, id),
    remove: (tenantId, id) => deleteDocument(pool, tenantId, id),
  };
}

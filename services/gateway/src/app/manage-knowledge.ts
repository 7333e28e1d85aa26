import { ValidationError } from "@steward/platform";
import type { DocumentSummary, KnowledgeDocument } from "@steward/store";
import type { Principal } from "../domain/principal";
import type { KnowledgeStore } from "./ports";

/** A tenant's knowledge base: always the caller's own tenant; tenants never see each other's documents. */
export interface KnowledgeBase {
  /** Adds (and chunks) a document; a title or body of only white space is 422. The title is kept trimmed. */
  add(caller: Principal, doc: { title: string; body: string }): Promise<{ id: string; title: string }>;
  list(caller: Principal, page: { page: number; pageSize: number }): Promise<{ items: DocumentSummary[]; total: number }>;
  /** Null when the tenant has no such document. */
  read(caller: Principal, id: string): Promise<KnowledgeDocument | null>;
  /** False when the tenant has no such document. */
  remove(caller: Principal, id: string): Promise<boolean>;
}

export function createKnowledgeBase(deps: { documents: KnowledgeStore }): KnowledgeBase {
  return {
    async add(caller, doc) {
      const title = doc.title.trim();
      if (!title || !doc.body.trim()) throw new ValidationError("title and body must not be only white space");
      const id = await deps.documents.add({ tenantId: caller.tenantId, title, body: doc.body });
      return { id, title };
    },
    list: (caller, page) => deps.documents.list(caller.tenantId, page),
    read: (caller, id) => deps.documents.read(caller.tenantId, id),
    remove: (caller, id) => deps.documents.remove(caller.tenantId, id),
  };
}

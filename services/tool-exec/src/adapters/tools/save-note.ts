import { Type } from "@sinclair/typebox";
import type { Pool } from "@steward/platform";
import { addDocument, insertDocument, KnowledgeFullError } from "@steward/store";
import type { ToolDefinition } from "../../domain/tool";

/** save_note's result code when the tenant's knowledge base holds as many documents as it may. */
const KNOWLEDGE_FULL = "KNOWLEDGE_FULL";

const Input = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 200 }),
    body: Type.String({ minLength: 1, maxLength: 20_000 }),
  },
  { additionalProperties: false },
);

/**
 * Saves a note into the tenant's knowledge base: a write, so it waits for the user's approval, and
 * idempotent, so a retried call after a crash does not save it twice.
 */
export function saveNoteTool(pool: Pool): ToolDefinition<typeof Input> {
  return {
    name: "save_note",
    description: "Save a note (title and text) into the knowledge base so that later runs can find it. The user must approve.",
    input: Input,
    normalise: (i) => ({ title: i.title.trim(), body: i.body.trim() }),
    safety: "write",
    policyPoint: "knowledge.document.write",
    idempotent: true,
    abortOnDeny: false,
    requireConfirmation: true,
    exploration: false,
    async run(ctx, input) {
      const doc = { tenantId: ctx.tenantId, title: input.title.trim(), body: input.body };
      try {
        // Saved with the call's idempotency record: exactly once, whatever fails between the two.
        const id = ctx.transaction ? await insertDocument(ctx.transaction, doc) : await addDocument(pool, doc);
        return { result: { saved: id, title: input.title.trim() } };
      } catch (err) {
        if (!(err instanceof KnowledgeFullError)) throw err;
        // Refused before anything was written: the run learns why, and the record keeps the answer.
        return {
          resultCode: KNOWLEDGE_FULL,
          result: { error_code: KNOWLEDGE_FULL, max: err.max, note: "the knowledge base is full; nothing was saved, do not try again" },
        };
      }
    },
  };
}

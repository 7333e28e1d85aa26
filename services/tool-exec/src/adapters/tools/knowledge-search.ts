import { Type } from "@sinclair/typebox";
import type { Pool } from "@steward/platform";
import { searchKnowledge } from "@steward/store";
import type { ToolDefinition } from "../../domain/tool";

const Input = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: 500, description: "What to look for, in natural language" }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, description: "Passages to return (default 5)" })),
  },
  { additionalProperties: false },
);

/** Searches the tenant's knowledge base; each hit is evidence the answer may cite. */
export function knowledgeSearchTool(pool: Pool): ToolDefinition<typeof Input> {
  return {
    name: "knowledge_search",
    description: "Search the tenant's knowledge base. Returns the most relevant passages with their document id, title and score.",
    input: Input,
    normalise: (input) => ({ query: input.query.trim().replace(/\s+/g, " ").toLowerCase(), limit: input.limit ?? 5 }),
    safety: "read",
    policyPoint: "knowledge.document.read",
    idempotent: true,
    abortOnDeny: false,
    requireConfirmation: false,
    exploration: false,
    async run(ctx, input) {
      const evidence = await searchKnowledge(pool, ctx.tenantId, input.query, input.limit ?? 5);
      return {
        result: {
          matches: evidence.length,
          passages: evidence.map((e) => ({ document_id: e.document_id, title: e.title, snippet: e.snippet, score: e.score })),
        },
        evidence,
      };
    },
  };
}

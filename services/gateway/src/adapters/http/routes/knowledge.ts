import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { NotFoundError, type Pool } from "@steward/platform";
import { createPgKnowledgeStore } from "../../pg/knowledge-store";
import { createKnowledgeBase, type KnowledgeBase } from "../../../app/manage-knowledge";
import { principalOf, resourcePolicy } from "../route-guard";
import { problemResponses } from "../openapi/problems";
import { Nullable, UUID_PATTERN } from "../schemas";
import { pageOf } from "../../../domain/page";

export interface KnowledgeRoutesDeps {
  readonly pool: Pool;
  /** Default: the knowledge base in `pool`. */
  readonly knowledge?: KnowledgeBase;
}

const NewDocument = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 200 }),
    body: Type.String({ minLength: 1, maxLength: 200_000 }),
    format: Type.Optional(Type.Union([Type.Literal("text"), Type.Literal("markdown")])),
  },
  { additionalProperties: false, examples: [{ title: "Shipping handbook", body: "We ship to the EU and the US.", format: "text" }] },
);
const ListQuery = Type.Object(
  {
    page: Type.Optional(Type.String({ pattern: "^[1-9][0-9]{0,8}$", description: "Page number, from 1 (default 1)" })),
    page_size: Type.Optional(Type.String({ pattern: "^([1-9]|[1-9][0-9]|100)$", description: "1-100 (default 20)" })),
  },
  { additionalProperties: false },
);
const DocumentParams = Type.Object({ id: Type.String({ pattern: UUID_PATTERN.source, description: "A document id" }) });
export const DocumentSummary = Type.Object({
  id: Type.String(),
  title: Type.String(),
  chunks: Type.Integer(),
  chars: Type.Integer(),
  created_at: Type.String(),
});

/** Where a document made by applying a knowledge proposal came from (docs/memory.md). */
const Provenance = Nullable(
  Type.Object(
    {
      thread_id: Nullable(Type.String({ description: "The thread of the run that proposed it; null for a run outside a thread" })),
      run_id: Type.String({ description: "The run that proposed it" }),
      step_no: Type.Integer({ description: "The run's step whose tool call proposed it" }),
      proposal_id: Type.String({ description: "The applied proposal (GET /v1/knowledge/proposals)" }),
    },
    { description: "The proposal the document was applied from; null for a document added otherwise" },
  ),
);

const common = (summary: string, description: string) => ({ tags: ["knowledge"], summary, description, security: [{ bearerAuth: [] }] });
const READ = { policy: resourcePolicy("knowledge.document.read", "knowledge") };
const WRITE = { policy: resourcePolicy("knowledge.document.write", "knowledge") };

/** The tenant's knowledge base: add (chunked), list, read, delete. Tenants never see each other's documents. */
export function registerKnowledgeRoutes(app: FastifyInstance, deps: KnowledgeRoutesDeps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const knowledge = deps.knowledge ?? createKnowledgeBase({ documents: createPgKnowledgeStore(deps.pool) });

  api.post(
    "/v1/knowledge/documents",
    {
      config: WRITE,
      schema: {
        ...common("Add a document", "Adds a document to the tenant's knowledge base, chunked for search (policy point knowledge.document.write)."),
        body: NewDocument,
        response: {
          201: Type.Object({ id: Type.String(), title: Type.String() }, { description: "The document; Location names it" }),
          ...problemResponses({ body: true }),
        },
      },
    },
    async (request, reply) => {
      const added = await knowledge.add(principalOf(request), request.body);
      return reply.status(201).header("location", `/v1/knowledge/documents/${added.id}`).send(added);
    },
  );

  api.get(
    "/v1/knowledge/documents",
    {
      config: READ,
      schema: {
        ...common("List documents", "The tenant's documents, newest first (policy point knowledge.document.read)."),
        querystring: ListQuery,
        response: {
          200: Type.Object({ items: Type.Array(DocumentSummary), page: Type.Integer(), page_size: Type.Integer(), total: Type.Integer() }),
          ...problemResponses(),
        },
      },
    },
    async (request) => {
      const { page, pageSize } = pageOf(request.query);
      const { items, total } = await knowledge.list(principalOf(request), { page, pageSize });
      return { items, page, page_size: pageSize, total };
    },
  );

  api.get(
    "/v1/knowledge/documents/:id",
    {
      config: { ...READ, notFound: "document not found" },
      schema: {
        ...common(
          "Read a document",
          "One document of the tenant, whole (policy point knowledge.document.read): what a run's evidence points at by document_id.",
        ),
        params: DocumentParams,
        response: {
          200: Type.Composite([DocumentSummary, Type.Object({ body: Type.String(), provenance: Provenance })]),
          ...problemResponses({ notFound: true }),
        },
      },
    },
    async (request) => {
      const document = await knowledge.read(principalOf(request), request.params.id);
      if (!document) throw new NotFoundError("document not found");
      return document;
    },
  );

  api.delete(
    "/v1/knowledge/documents/:id",
    {
      config: { ...WRITE, notFound: "document not found" },
      schema: {
        ...common("Delete a document", "Deletes a document of the tenant and its chunks (policy point knowledge.document.write)."),
        params: DocumentParams,
        response: { 204: Type.Null({ description: "Deleted" }), ...problemResponses({ notFound: true }) },
      },
    },
    async (request, reply) => {
      if (!(await knowledge.remove(principalOf(request), request.params.id))) throw new NotFoundError("document not found");
      // No body at all (not `null`): the typed reply only knows the schema of 204.
      return reply.status(204).send(undefined as unknown as null);
    },
  );
}

import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { PolicyPoint } from "@steward/contract";
import { NotFoundError, ValidationError, type Pool } from "@steward/platform";
import { addDocument, deleteDocument, listDocuments } from "@steward/store";
import type { Authenticate, Principal } from "../auth";
import type { Authorize } from "../../../app/authorize";
import { UUID_PATTERN, parseOr400, singleValuedQuery } from "../schemas";
import { traceparentOf } from "./runs";

const NewDocument = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 200 }),
    body: Type.String({ minLength: 1, maxLength: 200_000 }),
    format: Type.Optional(Type.Union([Type.Literal("text"), Type.Literal("markdown")])),
  },
  { additionalProperties: false },
);
const ListQuery = Type.Object(
  {
    page: Type.Optional(Type.String({ pattern: "^[1-9][0-9]{0,8}$" })),
    page_size: Type.Optional(Type.String({ pattern: "^([1-9]|[1-9][0-9]|100)$" })),
  },
  { additionalProperties: false },
);

/** The tenant's knowledge base: add (chunked), list, delete. Tenants never see each other's documents. */
export function registerKnowledgeRoutes(app: FastifyInstance, deps: { pool: Pool; authenticate: Authenticate; authorize: Authorize }): void {
  async function guard(request: FastifyRequest, point: PolicyPoint): Promise<Principal> {
    const principal = await deps.authenticate(request.headers.authorization);
    await deps.authorize(principal, point, { type: "resource", id: "knowledge" }, traceparentOf(request));
    return principal;
  }

  app.post("/v1/knowledge/documents", async (request, reply) => {
    const p = await guard(request, "knowledge.document.write");
    const body = parseOr400(NewDocument, request.body, "the request body");
    if (!body.title.trim() || !body.body.trim()) throw new ValidationError("title and body must not be only white space");
    const id = await addDocument(deps.pool, { tenantId: p.tenantId, title: body.title.trim(), body: body.body });
    return reply.status(201).header("location", `/v1/knowledge/documents/${id}`).send({ id, title: body.title.trim() });
  });

  app.get("/v1/knowledge/documents", async (request) => {
    const p = await guard(request, "knowledge.document.read");
    const q = parseOr400(ListQuery, singleValuedQuery(request.query), "the query");
    const page = Number(q.page ?? 1);
    const pageSize = Number(q.page_size ?? 20);
    const { items, total } = await listDocuments(deps.pool, p.tenantId, { page, pageSize });
    return { items, page, page_size: pageSize, total };
  });

  app.delete("/v1/knowledge/documents/:id", async (request, reply) => {
    const p = await guard(request, "knowledge.document.write");
    const id = (request.params as { id: string }).id;
    if (!UUID_PATTERN.test(id) || !(await deleteDocument(deps.pool, p.tenantId, id))) throw new NotFoundError("document not found");
    return reply.status(204).send();
  });
}

import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import { registerSharedSchemas } from "./shared-schemas";
import { BODY_OPTIONAL } from "../schemas";

/** The version the document states; the API's, not the package's. */
export const API_VERSION = "1.0.0";

/** Where the document and its reference page are served. */
export const OPENAPI_PATH = "/openapi.json";
export const DOCS_PATH = "/docs";

const DESCRIPTION = [
  "Steward's REST API: durable, policy-governed agent runs, their events, the knowledge base and tenant administration.",
  "Every route but the probes and this reference takes `Authorization: Bearer <JWT>` (claims `sub` user, `tid` tenant,",
  "`roles`) and asks the policy decision point for its policy point. Every error is `application/problem+json`",
  "`{type, title, status, code, detail}` with a numeric Steward `code` (SPEC §7).",
].join(" ");

/**
 * The OpenAPI 3.1 document, built from the routes' own schemas (register before the routes: it collects them as
 * they are added), served at /openapi.json, and the Swagger UI reference page at /docs from the package's own
 * files (no CDN). Both are public: no token, no policy point; like any request without a token they count
 * against the client address's rate limit.
 */
export function registerOpenApi(app: FastifyInstance): void {
  registerSharedSchemas(app);
  void app.register(swagger, {
    // Shared schemas keep their `$id` as their name in components/schemas.
    refResolver: { buildLocalReference: (json: { $id?: unknown }, _base: unknown, _fragment: unknown, i: number) => String(json.$id ?? `def-${i}`) },
    transformObject: (document) => ("openapiObject" in document ? withOptionalBodies(document.openapiObject as OpenApiObject) : document.swaggerObject),
    openapi: {
      openapi: "3.1.0",
      info: { title: "Steward API", version: API_VERSION, description: DESCRIPTION },
      tags: [
        { name: "runs", description: "Agent runs: create, read, control, events" },
        { name: "threads", description: "Threads: conversations of several runs" },
        { name: "knowledge", description: "The tenant's knowledge base" },
        { name: "members", description: "Memberships of the tenant (administrators)" },
        { name: "datasets", description: "Datasets the tenant's members may focus (administrators)" },
        { name: "policies", description: "Policy sets of the tenant (administrators)" },
        { name: "elevations", description: "Time-boxed elevations (administrators)" },
        { name: "admin", description: "Every user's runs of the tenant (administrators; each read is audited)" },
        { name: "audit", description: "The policy decision log and the log of administrators' run reads" },
        { name: "operations", description: "Probes and the platform status" },
      ],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: "http",
            scheme: "bearer",
            bearerFormat: "JWT",
            description: "A JWT with `sub` (user), `tid` (tenant), optional `roles`, and `exp`; HS256 or a JWKS key. Any failure is 401 / 10011.",
          },
        },
      },
    },
  });
  void app.register(swaggerUi, { routePrefix: DOCS_PATH, staticCSP: true, uiConfig: { deepLinking: true } });
  app.after(() => {
    // Served as generated; the document is built once, at the first request.
    app.get(OPENAPI_PATH, { schema: { hide: true } }, async (_request, reply) => reply.header("cache-control", "no-cache").send(app.swagger()));
  });
}

interface OpenApiObject {
  paths?: Record<string, Record<string, { requestBody?: { required?: boolean }; [BODY_OPTIONAL]?: boolean }>>;
}

/** Fastify's body schema says nothing of leaving the body out: routes that allow it say so with BODY_OPTIONAL. */
function withOptionalBodies(document: OpenApiObject): OpenApiObject {
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      if (operation[BODY_OPTIONAL] === undefined) continue;
      if (operation.requestBody) operation.requestBody.required = false;
      delete operation[BODY_OPTIONAL];
    }
  }
  return document;
}

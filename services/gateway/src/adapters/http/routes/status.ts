import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import type { StatusReader } from "../../../app/platform-status";
import { principalOf, resourcePolicy } from "../route-guard";
import { problemResponses } from "../openapi/problems";
import { NoQuery, Nullable } from "../schemas";

export interface StatusRoutesDeps {
  readonly status: StatusReader;
}

/** What an operator sees (open objects: every part as the status builds it). */
const PlatformStatusView = Type.Object(
  {
    scope: Type.Literal("platform"),
    status: Type.String({ enum: ["ok", "degraded"] }),
    checked_at: Type.String(),
    problems: Type.Array(Type.String(), { description: "What is wrong, in plain words" }),
    dependencies: Type.Object({ postgres: Type.Unknown(), nats: Type.Unknown(), policy: Type.Unknown() }),
    services: Type.Array(Type.Object({}), { description: "Every live instance as it reports itself" }),
    runners: Type.Object({ attached: Type.Integer(), in_flight: Type.Integer(), consumer: Nullable(Type.Object({})) }),
    queue: Nullable(Type.Object({})),
    outbox: Nullable(Type.Object({})),
    dead_letters: Nullable(Type.Object({})),
  },
  { description: "The platform as the gateway sees it: for the operators' tenant (STEWARD_OPERATOR_TENANT)" },
);

/** What another tenant's administrator sees: whether the platform serves, and the tenant's own open runs. */
const TenantStatusView = Type.Object(
  {
    scope: Type.Literal("tenant"),
    tenant_id: Type.String(),
    status: Type.String({ enum: ["ok", "degraded"] }),
    checked_at: Type.String(),
    problems: Type.Array(Type.String(), { description: "What is wrong for the tenant, in plain words" }),
    queue: Nullable(Type.Object({}, { description: "The tenant's own open runs: queued, running, awaiting, oldest_queued_age_seconds" })),
  },
  { description: "The caller's tenant: nothing of another tenant, nothing of the platform's instances" },
);

/**
 * `GET /v1/admin/status` (policy point platform.status.read): the whole platform for the operators' tenant, the
 * caller's own tenant for any other tenant's administrator.
 */
export function registerStatusRoutes(app: FastifyInstance, deps: StatusRoutesDeps): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    "/v1/admin/status",
    {
      config: { policy: resourcePolicy("platform.status.read") },
      schema: {
        tags: ["operations"],
        summary: "Platform status",
        description:
          "For the operators' tenant (STEWARD_OPERATOR_TENANT): dependencies, instances, runners, backlog and dead letters, with the problems in plain words (scope platform). For any other tenant's administrator: whether the platform serves and the tenant's own open runs (scope tenant). Policy point platform.status.read. Takes no query.",
        security: [{ bearerAuth: [] }],
        querystring: NoQuery,
        response: { 200: Type.Union([PlatformStatusView, TenantStatusView]), ...problemResponses() },
      },
    },
    async (request, reply) => reply.header("cache-control", "no-store").send(await deps.status(principalOf(request))),
  );
}

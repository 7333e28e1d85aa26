import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import type { PlatformStatus } from "../../../app/platform-status";
import { resourcePolicy } from "../route-guard";
import { problemResponses } from "../openapi/problems";
import { NoQuery, Nullable } from "../schemas";

export interface StatusRoutesDeps {
  readonly platformStatus: PlatformStatus;
}


/** What an operator sees (open objects: every part as the status builds it). */
const PlatformStatusView = Type.Object(
  {
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
  { description: "The platform as the gateway sees it" },
);

/** `GET /v1/admin/status`: the platform as an operator needs to see it (policy point platform.status.read). */
export function registerStatusRoutes(app: FastifyInstance, deps: StatusRoutesDeps): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    "/v1/admin/status",
    {
      config: { policy: resourcePolicy("platform.status.read") },
      schema: {
        tags: ["operations"],
        summary: "Platform status",
        description: "Dependencies, instances, runners, backlog and dead letters, with the problems in plain words (policy point platform.status.read). Takes no query.",
        security: [{ bearerAuth: [] }],
        querystring: NoQuery,
        response: { 200: PlatformStatusView, ...problemResponses() },
      },
    },
    async (_request, reply) => reply.header("cache-control", "no-store").send(await deps.platformStatus()),
  );
}

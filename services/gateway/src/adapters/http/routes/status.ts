import type { FastifyInstance } from "fastify";
import { BadRequestError } from "@steward/platform";
import type { Authenticate } from "../auth";
import type { Authorize } from "../../../app/authorize";
import type { PlatformStatus } from "../../../app/platform-status";
import { traceparentOf } from "./runs";

export interface StatusRoutesDeps {
  readonly authenticate: Authenticate;
  readonly authorize: Authorize;
  readonly platformStatus: PlatformStatus;
}

/** `GET /v1/admin/status`: the platform as an operator needs to see it (policy point platform.status.read). */
export function registerStatusRoutes(app: FastifyInstance, deps: StatusRoutesDeps): void {
  app.get("/v1/admin/status", async (request, reply) => {
    if (Object.keys((request.query as object) ?? {}).length > 0) throw new BadRequestError("this route takes no query");
    const principal = await deps.authenticate(request.headers.authorization);
    await deps.authorize(principal, "platform.status.read", { type: "resource", id: "platform.status.read" }, traceparentOf(request));
    return reply.header("cache-control", "no-store").send(await deps.platformStatus());
  });
}

import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { Readiness } from "@steward/platform";

const Ready = Type.Object({
  status: Type.Union([Type.Literal("ready"), Type.Literal("not ready")]),
  reasons: Type.Array(Type.String()),
  checks: Type.Object({}, { description: "Each dependency's check" }),
});

/** The orchestrator's probes: public, never rate limited. */
export function registerProbeRoutes(app: FastifyInstance, deps: { readonly readiness: Readiness }): void {
  const tags = ["operations"];
  app.get(
    "/healthz",
    { schema: { tags, summary: "Liveness", description: "The process serves HTTP. Public.", response: { 200: Type.Object({ status: Type.Literal("ok") }) } } },
    async () => ({ status: "ok" }),
  );
  app.get(
    "/readyz",
    {
      schema: {
        tags,
        summary: "Readiness",
        description: "Whether PostgreSQL, NATS and the policy decision point are reachable, with reasons. Public.",
        response: { 200: { ...Ready, description: "Ready" }, 503: { ...Ready, description: "Not ready" } },
      },
    },
    async (_request, reply) => {
      const r = await deps.readiness.report();
      return reply
        .status(r.ready ? 200 : 503)
        .header("cache-control", "no-store")
        .send({ status: r.ready ? "ready" : "not ready", reasons: r.reasons, checks: r.checks });
    },
  );
}

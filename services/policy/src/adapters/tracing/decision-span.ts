import { inSpan, SpanKind, tracingOn } from "@steward/platform";
import type { DecisionHandler, DecisionQuery } from "@steward/pdp";

/**
 * Decides inside a server span, a child of the caller's (the `traceparent` of the call's metadata): the action,
 * the resource type, the effect and the code. No principal: neither the tenant nor the user is on the span
 * (the decision's log line has the tenant and the run; the trace id joins the two).
 */
export function tracedDecision(handle: DecisionHandler, query: DecisionQuery, traceparent: string | undefined): ReturnType<DecisionHandler> {
  if (!tracingOn()) return handle(query);
  return inSpan(
    "steward.v1.PolicyDecision/Decide",
    {
      kind: SpanKind.SERVER,
      parent: traceparent,
      attributes: {
        "rpc.system": "grpc",
        "rpc.service": "steward.v1.PolicyDecision",
        "rpc.method": "Decide",
        "steward.policy.action": query.action,
        "steward.policy.resource_type": query.resource.type,
      },
    },
    async (span) => {
      const decision = await handle(query);
      span.setAttributes({ "steward.policy.effect": decision.permit ? "permit" : "deny", "steward.policy.code": decision.code });
      return decision;
    },
  );
}

import { inSpan, SpanKind, traceparentFor, tracingOn } from "@steward/platform";
import type { PolicyDecisionApi } from "@steward/proto";

/**
 * One client span per question to the PDP, a child of the tool call's span (the traceparent it is asked
 * with), which the PDP receives in turn. The action and the answer's effect and code only: no principal.
 */
export function tracedPdp(pdp: PolicyDecisionApi): PolicyDecisionApi {
  return {
    decide(req, options) {
      if (!tracingOn()) return pdp.decide(req, options);
      return inSpan(
        "steward.v1.PolicyDecision/Decide",
        {
          kind: SpanKind.CLIENT,
          parent: options?.traceparent,
          attributes: { "rpc.system": "grpc", "rpc.service": "steward.v1.PolicyDecision", "rpc.method": "Decide", "steward.policy.action": req.action },
        },
        async (span) => {
          const answer = await pdp.decide(req, { ...options, traceparent: traceparentFor(span, options?.traceparent) });
          span.setAttributes({ "steward.policy.effect": answer.permit ? "permit" : "deny", "steward.policy.code": answer.code });
          return answer;
        },
      );
    },
    state: () => pdp.state(),
    close: () => pdp.close(),
  };
}

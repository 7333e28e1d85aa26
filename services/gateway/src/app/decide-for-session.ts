import type { ApprovalChannel, PolicyPoint } from "@steward/contract";
import type { Logger } from "@steward/platform";
import type { Principal } from "../domain/principal";
import type { McpMode } from "../domain/mcp-mode";
import type { GatewayDecide } from "./gateway-decisions";

/** The MCP session a decision is made for: the PDP gets both in its context and the decision log names them. */
export interface McpSessionRef {
  readonly id: string;
  readonly mode: McpMode;
}

/** A decision for an MCP session: `code` is the PDP's deny code, or 60502 when it could not be asked. */
export interface SessionDecision {
  readonly permit: boolean;
  readonly code: string;
}

export type DecideForSession = (
  principal: Principal,
  point: PolicyPoint,
  resource: { type: string; id: string },
  session: McpSessionRef,
  options?: { runId?: string; traceparent?: string; toolSafety?: "read" | "write"; approvalChannel?: ApprovalChannel },
) => Promise<SessionDecision>;

/** The deny code of a decision the PDP could not make (SPEC §7): nothing is run. */
export const PDP_UNAVAILABLE = "60502";

/**
 * Decides one MCP call (or the opening of a session), naming the session and its mode in the decision's context
 * (`mcp_session`, `mcp_mode`; Cedar sees them as optional context attributes). Fails closed: a decision that
 * cannot be made is a deny with 60502.
 */
export function createSessionDecider(deps: { decide: GatewayDecide; logger: Logger }): DecideForSession {
  return async (principal, point, resource, session, options = {}) => {
    const context: Record<string, string> = { mcp_session: session.id, mcp_mode: session.mode };
    if (options.runId) context.run_id = options.runId;
    // A capability's own point is decided on the tool, whose safety the policy may test (Observe never writes).
    if (options.toolSafety) context.tool_safety = options.toolSafety;
    // A confirmation decided through MCP names its channel: the default set admits only a person's (docs/security.md).
    if (options.approvalChannel) context.approval_channel = options.approvalChannel;
    try {
      const d = await deps.decide(
        { tenantId: principal.tenantId, userId: principal.userId, tokenRoles: [...principal.roles], action: point, resource, context },
        { traceparent: options.traceparent },
      );
      return { permit: d.permit, code: d.permit ? "" : d.code || "60500" };
    } catch (err) {
      deps.logger.warn(
        { error_class: (err as Error)?.name, code: (err as { code?: number | string }).code, action: point, mcp_session: session.id },
        "MCP call could not be decided; denying",
      );
      return { permit: false, code: PDP_UNAVAILABLE };
    }
  };
}

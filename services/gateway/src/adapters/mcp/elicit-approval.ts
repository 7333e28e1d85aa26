import type { ElicitRequestFormParams, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import type { RunOutcome } from "../../app/run-outcome";
import { mayWrite } from "../../domain/mcp-mode";
import { newTraceparent } from "../http/trace-context";
import type { McpCall, McpToolDeps } from "./tool";

/**
 * The longest arguments a client's prompt shows. A person approves only what they were shown whole: a call with
 * longer arguments is not asked through the client (the console and the CLI show it whole).
 */
const SHOWN_ARGUMENTS = 4000;

/** The most confirmations one call asks through the client (a run may write more than once). */
const MAX_ASKED = 5;

const APPROVAL_SCHEMA: ElicitRequestFormParams["requestedSchema"] = {
  type: "object",
  properties: {
    decision: { type: "string", title: "Decision", enum: ["approve", "reject"], description: "approve runs this exact call once; reject refuses it" },
  },
  required: ["decision"],
};

/**
 * A write waiting for a person's approval, asked through the MCP client when it supports elicitation (docs/mcp.md)
 * and the tenant's policy admits that channel: the PDP decides agent.run.control with `approval_channel:
 * "mcp_elicitation"` (naming the session) before the person is asked, and the default set forbids it, since the
 * client that shows the prompt is the agent's host (docs/security.md). Admitted, the person sees the tool and its
 * exact arguments, and an answer is confirmed bound to the call's fingerprint, recorded with its channel. A client
 * that cannot elicit, a channel the policy does not admit, a person who declines or cancels, or an Observe
 * session: the waiting outcome is answered as it stands (approval from the console, the CLI or the REST API).
 */
export async function approveByElicitation(call: McpCall<unknown>, deps: McpToolDeps, outcome: RunOutcome, until: number): Promise<RunOutcome> {
  let current = outcome;
  for (let asked = 0; asked < MAX_ASKED; asked++) {
    const waiting = current.waiting_for;
    if (!call.elicit || !mayWrite(call.session.mode) || waiting?.kind !== "confirmation" || !waiting.fingerprint || call.signal.aborted) return current;
    if (waiting.arguments.length > SHOWN_ARGUMENTS) return current;
    const verdict = await deps.decide(call.principal, "agent.run.control", { type: "run", id: current.run_id }, call.session, {
      runId: current.run_id,
      approvalChannel: "mcp_elicitation",
    });
    if (!verdict.permit) return current;
    let reply: ElicitResult;
    try {
      reply = await call.elicit({
        mode: "form",
        message: `Steward run ${current.run_id} asks to call ${waiting.tool_name} with ${waiting.arguments}. Approve this call?`,
        requestedSchema: APPROVAL_SCHEMA,
      });
    } catch (err) {
      deps.logger.debug({ err, mcp_session: call.session.id }, "the client did not answer the elicitation; the run waits for an approval");
      return current;
    }
    const decision = reply.action === "accept" ? reply.content?.decision : undefined;
    if (decision !== "approve" && decision !== "reject") return current;
    await deps.controls.confirm(call.principal, current.run_id, decision, newTraceparent(), "mcp_elicitation", waiting.fingerprint);
    current = await deps.follow(call.principal, current.run_id, { waitMs: Math.max(0, until - Date.now()), signal: call.signal, onEvent: call.progress });
  }
  return current;
}

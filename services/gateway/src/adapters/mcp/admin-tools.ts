import { Type } from "@sinclair/typebox";
import type { RunStatus } from "@steward/contract";
import { newTraceparent } from "../http/trace-context";
import { McpToolFailure, closed, type McpTool } from "./tool";

const ListTenantRuns = Type.Object(
  {
    user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "Only this user's runs" })),
    state: Type.Optional(
      Type.Union(
        (["queued", "running", "awaiting_input", "awaiting_confirmation", "succeeded", "failed", "cancelled"] as const).map((s) => Type.Literal(s)),
        { description: "Only runs in this state" },
      ),
    ),
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
  },
  closed,
);

/**
 * An Admin session's view of every run of the tenant (docs/admin-runs.md): decided on agent.run.admin_read, and each
 * read recorded in the admin-reads audit before it is answered, exactly as GET /v1/admin/runs.
 */
export const listTenantRuns: McpTool<typeof ListTenantRuns> = {
  name: "list_tenant_runs",
  description: "Lists the runs of your whole tenant, newest first (20 a page), as GET /v1/admin/runs; each read is recorded in the audit.",
  input: ListTenantRuns,
  readOnly: true,
  decision: () => ({ point: "agent.run.admin_read", resource: { type: "run", id: "" } }),
  async run(call, deps) {
    if (!deps.adminRuns) throw new McpToolFailure("10503", "the administrators' view is unavailable");
    const { user_id, state, page } = call.args;
    const query = { ...(user_id ? { user: user_id } : {}), ...(state ? { state: state as RunStatus } : {}), ...(page ? { page: String(page) } : {}) };
    return deps.adminRuns.list({ principal: call.principal, traceparent: newTraceparent() }, query);
  },
};

/** The capabilities of Admin sessions only. */
export const adminTools = (): Record<"list_tenant_runs", McpTool> => ({ list_tenant_runs: listTenantRuns as unknown as McpTool });

import { Type } from "@sinclair/typebox";
import { ConflictError } from "@steward/platform";
import { mayWrite } from "../../domain/mcp-mode";
import { newTraceparent } from "../http/trace-context";
import { McpToolFailure, closed, type McpCall, type McpTool, type McpToolDeps } from "./tool";

const SelectWorkspace = Type.Object(
  {
    dataset: Type.String({
      pattern: "^[a-z][a-z0-9_]{0,62}$",
      description: "A dataset of your tenant you may use (focus_dataset without arguments lists them in a run)",
    }),
  },
  closed,
);

/** Cancels the session's runs bound to the workspace it leaves; the ids of those it stopped. */
async function revokeRunsOf(call: McpCall<unknown>, deps: McpToolDeps, workspace: string): Promise<string[]> {
  const revoked: string[] = [];
  for (const runId of call.state.runsBoundTo(workspace)) {
    try {
      await deps.controls.cancel(call.principal, runId, newTraceparent());
      revoked.push(runId);
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err; // ended already: nothing left to revoke
    }
  }
  return revoked;
}

/**
 * Selects the session's workspace: one dataset of the tenant the user may use now (docs/mcp.md). The dataset-bound
 * capabilities act on it (its focus precedes each of their calls); until one is selected they answer
 * WORKSPACE_SELECTION_REQUIRED. The catalogue does not change. An Execute or Admin session holds one workspace at a
 * time: switching cancels the session's runs bound to the old one that have not ended, and with them the approvals
 * they wait for. Decided on `dataset.read` with the dataset as resource, naming the session.
 */
export const selectWorkspace: McpTool<typeof SelectWorkspace> = {
  name: "select_workspace",
  description:
    "Selects the dataset this session works on; explore_dataset and every dataset capability act on it. In Execute and Admin sessions, switching " +
    "cancels this session's runs on the previous workspace that have not ended. Returns workspace, previous and revoked_runs.",
  input: SelectWorkspace,
  // Switching cancels runs in Execute and Admin: not a read.
  readOnly: false,
  decision: (args) => ({ point: "dataset.read", resource: { type: "resource", id: args.dataset } }),
  async run(call, deps) {
    const { dataset } = call.args;
    const granted = await deps.grantedDatasets(call.principal.tenantId, call.principal.userId);
    if (!granted.includes(dataset)) throw new McpToolFailure("DATASET_NOT_ALLOWED", "your tenant grants you no dataset of this name");
    const previous = call.state.workspace;
    call.state.workspace = dataset;
    const leaving = previous !== null && previous !== dataset && mayWrite(call.session.mode);
    const revoked = leaving ? await revokeRunsOf(call, deps, previous) : [];
    return { workspace: dataset, previous, revoked_runs: revoked };
  },
};

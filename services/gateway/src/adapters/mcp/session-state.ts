/** The most runs a session remembers (for switching its workspace); the oldest are forgotten first. */
const REMEMBERED_RUNS = 1000;

/**
 * What one MCP session holds besides its id and mode, in the gateway's memory for the session's life: the
 * workspace it selected (select_workspace; null until then) and the runs it started, each with the workspace it
 * was bound to, so that switching can revoke the old workspace's runs (docs/mcp.md).
 */
export interface McpSessionState {
  workspace: string | null;
  /** Records a run the session started, bound to the workspace selected at its start. */
  started(runId: string, workspace: string | null): void;
  /** The remembered runs bound to `workspace`, oldest first. */
  runsBoundTo(workspace: string): string[];
}

export function createSessionState(): McpSessionState {
  const runs = new Map<string, string | null>();
  return {
    workspace: null,
    started(runId, workspace) {
      runs.set(runId, workspace);
      if (runs.size > REMEMBERED_RUNS) runs.delete(runs.keys().next().value as string);
    },
    runsBoundTo: (workspace) => [...runs].filter(([, w]) => w === workspace).map(([id]) => id),
  };
}

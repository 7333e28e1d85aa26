import type { RequestPurpose, RunRequest, RunRequested } from "../run-requested";

/** The request for `run`, with the elevation reference only when the run has one. */
export function requestRun(
  run: { readonly id: string; readonly tenantId: string; readonly createdBy: string; readonly elevationSessionId: string | null },
  purpose: RequestPurpose,
): RunRequest {
  const command: RunRequested = { run_id: run.id, tenant_id: run.tenantId, created_by: run.createdBy };
  if (run.elevationSessionId) command.elevation_session_id = run.elevationSessionId;
  return { command, purpose };
}

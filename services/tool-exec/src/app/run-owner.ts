import type { InvokeCommand, InvokeHandler } from "./invoke-tool";

/** The runs projection as this check needs it (a port; PostgreSQL implements it). */
export interface RunOwners {
  /** True when run `runId` exists in `tenantId` and was created by `userId`. */
  owns(runId: string, tenantId: string, userId: string): Promise<boolean>;
}

/** The call names a run that does not exist in its tenant, or that another user created: nothing runs. */
export class RunNotOwnedError extends Error {
  constructor() {
    super("no such run for this tenant and user");
    this.name = "RunNotOwnedError";
  }
}

/**
 * Before anything else (the PDP included), a call's tenant and user must be those of an existing run: a caller
 * cannot borrow another tenant's or another user's name for a run it made up or a run that is theirs.
 */
export function requireRunOwner(invoke: InvokeHandler, runs: RunOwners): InvokeHandler {
  return async (cmd: InvokeCommand) => {
    if (!(await runs.owns(cmd.runId, cmd.tenantId, cmd.userId))) throw new RunNotOwnedError();
    return invoke(cmd);
  };
}

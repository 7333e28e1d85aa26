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

/** Runs whose owner was confirmed, remembered at most; the longest unconfirmed is forgotten first. */
const REMEMBERED_RUNS = 10_000;

/**
 * Before anything else (the PDP included), a call's tenant and user must be those of an existing run: a caller
 * cannot borrow another tenant's or another user's name for a run it made up or a run that is theirs.
 *
 * A run's tenant and creator never change, so an owner once confirmed is remembered: a run's later calls cost
 * no lookup. A refusal is never remembered.
 */
export function requireRunOwner(invoke: InvokeHandler, runs: RunOwners, remembered = REMEMBERED_RUNS): InvokeHandler {
  const owners = new Map<string, string>();
  return async (cmd: InvokeCommand) => {
    const owner = JSON.stringify([cmd.tenantId, cmd.userId]);
    if (owners.get(cmd.runId) !== owner) {
      if (!(await runs.owns(cmd.runId, cmd.tenantId, cmd.userId))) throw new RunNotOwnedError();
      owners.delete(cmd.runId);
      owners.set(cmd.runId, owner);
      if (owners.size > remembered) owners.delete(owners.keys().next().value!);
    }
    return invoke(cmd);
  };
}

/** A tenant's grant of a named dataset (the connection details stay in tool-exec's configuration). */
export interface DatasetGrant {
  readonly dataset: string;
  /** Roles that may focus the dataset, sorted; empty: every member of the tenant. */
  readonly roles: string[];
  readonly granted_by: string;
  readonly reason: string | null;
  readonly granted_at: string;
}

/** One recorded grant, change of roles or revocation, for the tenant's administrators. */
export interface DatasetGrantChange {
  readonly id: number;
  readonly dataset: string;
  readonly change: "granted" | "revoked";
  /** The grant's roles after the change; for a revocation, the roles it had. */
  readonly roles: string[];
  readonly changed_by: string;
  readonly reason: string | null;
  readonly changed_at: string;
}

/** Who changes a grant, and why (recorded with the change). */
export interface DatasetGrantActor {
  readonly userId: string;
  readonly reason?: string | null;
}

/** A dataset's name (the contract's, kept here for the store's callers). */
export { DATASET_NAME } from "@steward/contract";

export const GRANT_COLUMNS = "dataset, roles, granted_by, reason, granted_at";

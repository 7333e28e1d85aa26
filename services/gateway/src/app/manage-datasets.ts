import { NotFoundError, ValidationError } from "@steward/platform";
import { DATASET_NAME } from "@steward/contract";
import type { DatasetTenants, DatasetGrant, DatasetGrantChange } from "@steward/store";
import { ROLE_NAME } from "../domain/membership-names";
import type { Principal } from "../domain/principal";
import type { DatasetGrantStore } from "./ports";

/** The store's records, as the routes show them. */
export type { DatasetGrant, DatasetGrantChange };

/** The most roles one grant may name. */
export const GRANT_ROLES_MAX = 32;

/**
 * A tenant administrator's view of the tenant's datasets: which named datasets its members may focus (all of
 * them, or those holding one of some roles). Always the administrator's own tenant, never another.
 */
export interface DatasetAdmin {
  list(admin: Principal): Promise<DatasetGrant[]>;
  /**
   * Grants a dataset (422 for a name or role that does not fit; 404 for a dataset the operator does not list for the
   * tenant, the same answer whether or not it exists); `changed` is false when it was granted so already.
   */
  grant(admin: Principal, dataset: string, roles: readonly string[], reason?: string): Promise<{ grant: DatasetGrant; changed: boolean }>;
  /** Revokes a grant; 404 when the tenant holds none of that name. */
  revoke(admin: Principal, dataset: string, reason?: string): Promise<DatasetGrant>;
  changes(admin: Principal, filter: { dataset?: string; afterId?: number; limit: number }): Promise<DatasetGrantChange[]>;
}

/** The refusal of a dataset the tenant may not have: the same for one that does not exist. */
export const DATASET_NOT_AVAILABLE = "no dataset of this name is available to the tenant";

/**
 * Grants through the store, scoped by the administrator's tenant; only datasets the operator lists for the tenant
 * (`listed`, DATASET_TENANTS); every grant and revocation recorded with who and why.
 */
export function createDatasetAdmin(deps: { grants: DatasetGrantStore; listed: DatasetTenants }): DatasetAdmin {
  return {
    list: (admin) => deps.grants.list(admin.tenantId),
    async grant(admin, dataset, roles, reason) {
      if (!DATASET_NAME.test(dataset)) throw new ValidationError("a dataset name is 1 to 63 lower-case letters, digits or _, starting with a letter");
      if (roles.length > GRANT_ROLES_MAX || !roles.every((r) => ROLE_NAME.test(r))) {
        throw new ValidationError(`roles are at most ${GRANT_ROLES_MAX} names of 1 to 64 letters, digits or _ . : -, each starting with a letter or digit`);
      }
      if (!deps.listed.allows(dataset, admin.tenantId)) throw new NotFoundError(DATASET_NOT_AVAILABLE);
      return deps.grants.grant(admin.tenantId, dataset, roles, { userId: admin.userId, reason });
    },
    async revoke(admin, dataset, reason) {
      const revoked = DATASET_NAME.test(dataset) ? await deps.grants.revoke(admin.tenantId, dataset, { userId: admin.userId, reason }) : null;
      if (!revoked) throw new NotFoundError("the tenant holds no grant of this dataset");
      return revoked;
    },
    changes: (admin, filter) => deps.grants.changes(admin.tenantId, filter),
  };
}

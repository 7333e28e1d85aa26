import { NotFoundError } from "@steward/platform";
import type { Membership, MembershipChange } from "@steward/store";
import { checkGrant, isNameable } from "../domain/membership-names";
import type { Principal } from "../domain/principal";
import type { MemberStore } from "./ports";

/** The store's records, as the routes show them. */
export type { Membership, MembershipChange };

/** A tenant administrator's view of memberships: always the administrator's own tenant, never another. */
export interface MemberAdmin {
  list(admin: Principal, page: { page: number; pageSize: number; role?: string }): Promise<{ items: Membership[]; total: number }>;
  /** 404 when the user has no membership in the tenant. */
  get(admin: Principal, userId: string): Promise<Membership>;
  /** Grants a role (422 for a name that does not fit); `changed` is false when the user held it already. */
  grant(admin: Principal, userId: string, role: string, reason?: string): Promise<{ membership: Membership; changed: boolean }>;
  /** Revokes a role; 404 when the user does not hold it in the tenant. */
  revoke(admin: Principal, userId: string, role: string, reason?: string): Promise<Membership>;
  changes(admin: Principal, filter: { userId?: string; afterId?: number; limit: number }): Promise<MembershipChange[]>;
}

/** Memberships through the store, scoped by the administrator's tenant; every grant and revoke recorded with who and why. */
export function createMemberAdmin(deps: { members: MemberStore }): MemberAdmin {
  const notAMember = () => new NotFoundError("member not found");
  return {
    list: (admin, page) => deps.members.list(admin.tenantId, page),
    async get(admin, userId) {
      const found = isNameable(userId) ? await deps.members.find(admin.tenantId, userId) : null;
      if (!found) throw notAMember();
      return found;
    },
    async grant(admin, userId, role, reason) {
      checkGrant(userId, role);
      return deps.members.grant(admin.tenantId, userId, role, { userId: admin.userId, reason });
    },
    async revoke(admin, userId, role, reason) {
      const revoked = isNameable(userId) && isNameable(role) ? await deps.members.revoke(admin.tenantId, userId, role, { userId: admin.userId, reason }) : null;
      if (!revoked) throw new NotFoundError("the member does not hold this role");
      return revoked;
    },
    changes: (admin, filter) => deps.members.changes(admin.tenantId, filter),
  };
}

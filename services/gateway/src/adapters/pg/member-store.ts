import type { Pool } from "@steward/platform";
import { findMember, grantRole, listMembers, listMembershipChanges, revokeRole } from "@steward/store";
import type { MemberStore } from "../../app/ports";

/** Memberships and their change log in PostgreSQL. */
export function createPgMemberStore(pool: Pool): MemberStore {
  return {
    list: (tenantId, page) => listMembers(pool, tenantId, page),
    find: (tenantId, userId) => findMember(pool, tenantId, userId),
    grant: (tenantId, userId, role, by) => grantRole(pool, tenantId, userId, role, by),
    revoke: (tenantId, userId, role, by) => revokeRole(pool, tenantId, userId, role, by),
    changes: (tenantId, filter) => listMembershipChanges(pool, tenantId, filter),
  };
}

/** A user's roles in a tenant: the facts the PDP reads at every decision. */
export interface Membership {
  readonly user_id: string;
  /** Sorted, without duplicates; empty when every role was revoked (the user is still known). */
  readonly roles: string[];
  readonly updated_at: string;
}

/** One recorded change of a membership, for the tenant's administrators. */
export interface MembershipChange {
  readonly id: number;
  readonly user_id: string;
  /** `seeded`: the roles of the user's first token in the tenant; `granted` / `revoked`: one role, by an administrator. */
  readonly change: "seeded" | "granted" | "revoked";
  /** The role granted or revoked; null for `seeded`. */
  readonly role: string | null;
  /** The member's roles right after the change. */
  readonly roles: string[];
  /** The administrator who made the change (for `seeded`, the user whose token it was). */
  readonly changed_by: string;
  readonly reason: string | null;
  readonly changed_at: string;
}

/** Who changes a membership, and why (recorded with the change). */
export interface MembershipActor {
  readonly userId: string;
  readonly reason?: string | null;
}

export const MEMBERSHIP_COLUMNS = "user_id, roles, updated_at";

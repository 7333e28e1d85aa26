import type { PolicyFacts } from "../adapters/pg/facts";
import { createLru } from "../domain/lru";

/** A member's roles as a decision uses them. */
export interface RolesFact {
  readonly roles: string[];
  /**
   * Taken from the memory of an earlier read, not read for this decision: its record is written only while the
   * membership still holds exactly these roles (the decision log's check), else the decision is made again.
   */
  readonly remembered: boolean;
}

/** The membership roles each decision uses: remembered from the last read, verified where the record is written. */
export interface KnownRoles {
  /** The remembered roles of the member, or (unknown, or `fresh`) the roles read now, remembered from then on. */
  get(tenantId: string, userId: string, tokenRoles: readonly string[] | null, options?: { fresh?: boolean }): Promise<RolesFact>;
}

const keyOf = (tenantId: string, userId: string) => `${tenantId}\u0000${userId}`;

/**
 * Spares a decision the membership read without trusting memory: a decision made on remembered roles carries
 * them to its record, and the record's statement writes it only if the membership holds exactly them at that
 * moment (`DecisionEntry.rememberedRoles`). A change committed before the record is therefore never missed: the
 * record is refused, and the decision made again on roles read now (`fresh`), which are remembered instead (docs/policy.md, "Facts").
 * A member without roles is not remembered. At most `capacity` members are remembered, the least recently decided forgotten first.
 */
export function createKnownRoles(facts: Pick<PolicyFacts, "currentRoles">, capacity: number): KnownRoles {
  const remembered = createLru<string, readonly string[]>(capacity);
  return {
    async get(tenantId, userId, tokenRoles, options = {}) {
      const key = keyOf(tenantId, userId);
      const known = options.fresh ? undefined : remembered.get(key);
      if (known) return { roles: [...known], remembered: true };
      const roles = await facts.currentRoles(tenantId, userId, tokenRoles);
      // No roles may also mean no membership at all, which the record's check would never find: not remembered.
      if (roles.length > 0) remembered.set(key, [...roles]);
      else remembered.delete(key);
      return { roles, remembered: false };
    },
  };
}

import type { CedarEngine, ValidatedPolicySet } from "../adapters/cedar/engine";
import type { PolicySetStore } from "../adapters/pg/policy-sets";

export interface ActiveSet {
  readonly key: string;
  readonly version: number;
}

export interface ActiveSets {
  /** The tenant's active, pre-parsed set; installs the default set for a tenant that has none. */
  get(tenantId: string): Promise<ActiveSet>;
  /** Pre-parses any stored version (for a dry run) and returns its key. */
  version(tenantId: string, version: number): Promise<ActiveSet | null>;
  /** Forgets the tenant's active set; the next decision reads it again. */
  invalidate(tenantId: string): void;
}

/**
 * Pre-parsed Cedar sets per tenant and version. The active version is cached for up to `maxAgeMs` and
 * dropped at once when an activation message arrives, so every replica switches together.
 */
export function createActiveSets(
  deps: { store: PolicySetStore; engine: CedarEngine; defaultSet: ValidatedPolicySet; defaultText: string },
  options: { maxAgeMs?: number } = {},
): ActiveSets {
  const maxAgeMs = options.maxAgeMs ?? 30_000;
  const cache = new Map<string, { set: ActiveSet; at: number }>();

  function prepared(tenantId: string, version: number, text: string): ActiveSet {
    const key = `${tenantId}@${version}`;
    if (!deps.engine.isPrepared(key)) {
      const validated = deps.engine.validate(text);
      if (!validated.valid) throw new Error(`stored policy set ${key} no longer validates`);
      deps.engine.prepare(key, validated);
    }
    return { key, version };
  }

  return {
    async get(tenantId) {
      const hit = cache.get(tenantId);
      if (hit && Date.now() - hit.at < maxAgeMs) return hit.set;
      let row = await deps.store.active(tenantId);
      if (!row) {
        await deps.store.installDefault(tenantId, deps.defaultText, Object.keys(deps.defaultSet.policies));
        row = await deps.store.active(tenantId);
      }
      if (!row) throw new Error(`tenant ${tenantId} has policy sets but none is active`);
      const set = prepared(tenantId, row.version, row.policies);
      cache.set(tenantId, { set, at: Date.now() });
      return set;
    },
    async version(tenantId, version) {
      const row = await deps.store.get(tenantId, version);
      return row ? prepared(tenantId, row.version, row.policies) : null;
    },
    invalidate(tenantId) {
      cache.delete(tenantId);
    },
  };
}

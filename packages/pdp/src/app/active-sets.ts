import type { CedarEngine, PreparedPolicySet, ValidatedPolicySet } from "../adapters/cedar/engine";
import type { PolicySetRow, PolicySetStore } from "../adapters/pg/policy-sets";
import { createLru } from "../domain/lru";

export interface ActiveSet extends PreparedPolicySet {
  readonly version: number;
}

/**
 * The tenant has no policy set yet, and this reader may not install the default one (the gateway's route guard:
 * writing policy sets is the policy service's alone). The caller asks the policy service, which installs it.
 */
export class NoActiveSetError extends Error {
  constructor(readonly tenantId: string) {
    super(`tenant ${tenantId} has no policy set yet`);
    this.name = "NoActiveSetError";
  }
}

export interface ActiveSets {
  /**
   * The tenant's active, pre-parsed set; installs the default set for a tenant that has none (or, without
   * `installsDefault`, throws NoActiveSetError).
   */
  get(tenantId: string): Promise<ActiveSet>;
  /** Pre-parses any stored version (for a dry run); not kept among the tenants' active sets. */
  version(tenantId: string, version: number): Promise<ActiveSet | null>;
  /** Forgets the tenant's active set; the next decision reads it again. */
  invalidate(tenantId: string): void;
}

export interface ActiveSetsOptions {
  /** How long an active set is trusted before the store is asked again (default 30 000 ms). */
  readonly maxAgeMs?: number;
  /** How many tenants' active sets are held (default 1000); the least recently used is dropped and re-read on its next decision. */
  readonly maxTenants?: number;
  /** Whether a tenant without any set gets the default one installed (default true: the policy service). */
  readonly installsDefault?: boolean;
}

/**
 * Pre-parsed Cedar sets per tenant, held for at most `maxTenants` tenants (least recently used dropped first). The
 * active version is trusted for up to `maxAgeMs` and dropped at once when an activation message arrives, so every
 * replica switches together.
 *
 * A tenant's set is read and validated once however many decisions ask for it at the same moment (a cold start
 * under load would otherwise validate it once per request in flight). A read that an activation overtakes is
 * not kept: it may hold the version the activation replaced.
 */
export function createActiveSets(
  deps: { store: PolicySetStore; engine: CedarEngine; defaultSet: ValidatedPolicySet; defaultText: string },
  options: ActiveSetsOptions = {},
): ActiveSets {
  const maxAgeMs = options.maxAgeMs ?? 30_000;
  const cache = createLru<string, { set: ActiveSet; at: number }>(options.maxTenants ?? 1000);
  /** The read in flight per tenant, until it answers or an activation overtakes it (then it is dropped from here). */
  const reading = new Map<string, Promise<ActiveSet>>();

  function prepared(row: PolicySetRow): ActiveSet {
    const key = `${row.tenant_id}@${row.version}`;
    const validated = deps.engine.validate(row.policies);
    if (!validated.valid) throw new Error(`stored policy set ${key} no longer validates`);
    return { ...deps.engine.prepare(key, validated), version: row.version };
  }

  async function read(tenantId: string, aged: ActiveSet | undefined): Promise<ActiveSet> {
    let row = await deps.store.active(tenantId);
    if (!row) {
      if (options.installsDefault === false) throw new NoActiveSetError(tenantId);
      await deps.store.installDefault(tenantId, deps.defaultText, Object.keys(deps.defaultSet.policies));
      row = await deps.store.active(tenantId);
    }
    if (!row) throw new Error(`tenant ${tenantId} has policy sets but none is active`);
    // A version's text never changes, so an aged entry still on the active version is kept as parsed.
    return aged && aged.version === row.version ? aged : prepared(row);
  }

  return {
    get(tenantId) {
      const hit = cache.get(tenantId);
      if (hit && Date.now() - hit.at < maxAgeMs) return Promise.resolve(hit.set);
      const inFlight = reading.get(tenantId);
      if (inFlight) return inFlight;
      const load = read(tenantId, hit?.set);
      reading.set(tenantId, load);
      // Still the tenant's read when it answers: no activation overtook it, so its set is kept.
      const current = () => reading.get(tenantId) === load && reading.delete(tenantId);
      load.then((set) => {
        if (current()) cache.set(tenantId, { set, at: Date.now() });
      }, current);
      return load;
    },
    async version(tenantId, version) {
      const row = await deps.store.get(tenantId, version);
      return row ? prepared(row) : null;
    },
    invalidate(tenantId) {
      cache.delete(tenantId);
      reading.delete(tenantId);
    },
  };
}

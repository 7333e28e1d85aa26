/** An elevation session: a time-boxed grant of extra actions to one user, revocable at any moment. */
export interface ElevationRecord {
  id: string;
  tenant_id: string;
  user_id: string;
  actions: string[];
  granted_by: string;
  expires_at: string;
  revoked_at: string | null;
}

/** Where elevation sessions are kept (PostgreSQL: adapters/pg/elevations.ts). */
export interface Elevations {
  /** Grants `actions` to the user for `ttlSeconds` from now, by the database's clock. */
  create(e: { tenantId: string; userId: string; actions: readonly string[]; ttlSeconds: number; grantedBy: string }): Promise<ElevationRecord>;
  /** Revokes the tenant's session (once: a revoked session keeps its first revocation time); null when there is none. */
  revoke(tenantId: string, id: string): Promise<ElevationRecord | null>;
}

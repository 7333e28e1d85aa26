import { randomUUID } from "node:crypto";
import type { Pool } from "@steward/platform";

export interface ElevationRecord {
  id: string;
  tenant_id: string;
  user_id: string;
  actions: string[];
  granted_by: string;
  expires_at: string;
  revoked_at: string | null;
}

const COLUMNS = "id, tenant_id, user_id, actions, granted_by, expires_at, revoked_at";

/** Elevation sessions: time-boxed grants of extra actions to one user, revocable at any moment. */
export function createPgElevations(pool: Pool) {
  return {
    async create(e: { tenantId: string; userId: string; actions: readonly string[]; ttlSeconds: number; grantedBy: string }): Promise<ElevationRecord> {
      const { rows } = await pool.query<ElevationRecord>(
        `INSERT INTO elevation_sessions (id, tenant_id, user_id, actions, granted_by, expires_at)
         VALUES ($1, $2, $3, $4, $5, clock_timestamp() + make_interval(secs => $6)) RETURNING ${COLUMNS}`,
        [randomUUID(), e.tenantId, e.userId, e.actions, e.grantedBy, e.ttlSeconds],
      );
      return rows[0];
    },
    async revoke(tenantId: string, id: string): Promise<ElevationRecord | null> {
      const { rows } = await pool.query<ElevationRecord>(
        `UPDATE elevation_sessions SET revoked_at = coalesce(revoked_at, clock_timestamp())
          WHERE tenant_id = $1 AND id::text = $2 RETURNING ${COLUMNS}`,
        [tenantId, id],
      );
      return rows[0] ?? null;
    },
  };
}

export type Elevations = ReturnType<typeof createPgElevations>;

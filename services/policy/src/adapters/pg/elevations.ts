import { randomUUID } from "node:crypto";
import type { Pool } from "@steward/platform";
import type { ElevationRecord, Elevations } from "../../app/elevations";

const COLUMNS = "id, tenant_id, user_id, actions, granted_by, expires_at, revoked_at";

/** Elevation sessions in PostgreSQL (`elevation_sessions`). */
export function createPgElevations(pool: Pool): Elevations {
  return {
    async create(e) {
      const { rows } = await pool.query<ElevationRecord>(
        `INSERT INTO elevation_sessions (id, tenant_id, user_id, actions, granted_by, expires_at)
         VALUES ($1, $2, $3, $4, $5, clock_timestamp() + make_interval(secs => $6)) RETURNING ${COLUMNS}`,
        [randomUUID(), e.tenantId, e.userId, e.actions, e.grantedBy, e.ttlSeconds],
      );
      return rows[0];
    },
    async revoke(tenantId, id) {
      const { rows } = await pool.query<ElevationRecord>(
        `UPDATE elevation_sessions SET revoked_at = coalesce(revoked_at, clock_timestamp())
          WHERE tenant_id = $1 AND id::text = $2 RETURNING ${COLUMNS}`,
        [tenantId, id],
      );
      return rows[0] ?? null;
    },
  };
}

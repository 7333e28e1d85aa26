import type { Pool } from "@steward/platform";

export interface DecisionEntry {
  readonly tenantId: string;
  readonly userId: string;
  readonly action: string;
  readonly resourceType: string;
  readonly resourceId: string;
  readonly runId: string | null;
  readonly stepNo: number | null;
  readonly fingerprint: string | null;
  readonly elevationSessionId: string | null;
  readonly permit: boolean;
  readonly code: string;
  readonly policyIds: readonly string[];
  readonly policyVersion: number | null;
  readonly latencyMs: number;
}

export interface DecisionRow {
  id: number;
  decided_at: string;
  tenant_id: string;
  user_id: string;
  action: string;
  resource_type: string;
  resource_id: string;
  run_id: string | null;
  step_no: number | null;
  fingerprint: string | null;
  elevation_session_id: string | null;
  permit: boolean;
  code: string;
  policy_ids: string[];
  policy_version: number | null;
  latency_ms: number;
}

/** The durable decision log: written before a decision is answered, so nothing runs without a record. */
export interface DecisionLog {
  record(entry: DecisionEntry): Promise<void>;
  query(tenantId: string, filter: { runId?: string; afterId?: number; limit: number }): Promise<DecisionRow[]>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const uuidOrNull = (v: string | null) => (v && UUID.test(v) ? v : null);

export function createPgDecisionLog(pool: Pool): DecisionLog {
  return {
    async record(e) {
      await pool.query(
        `INSERT INTO policy_decisions (tenant_id, user_id, action, resource_type, resource_id, run_id, step_no, fingerprint,
                                       elevation_session_id, permit, code, policy_ids, policy_version, latency_ms)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
        [
          e.tenantId, e.userId, e.action, e.resourceType, e.resourceId, uuidOrNull(e.runId), e.stepNo, e.fingerprint,
          uuidOrNull(e.elevationSessionId), e.permit, e.code, e.policyIds, e.policyVersion, e.latencyMs,
        ],
      );
    },
    async query(tenantId, filter) {
      if (filter.runId !== undefined && !UUID.test(filter.runId)) return [];
      const { rows } = await pool.query<DecisionRow>(
        `SELECT id, decided_at, tenant_id, user_id, action, resource_type, resource_id, run_id, step_no, fingerprint,
                elevation_session_id, permit, code, policy_ids, policy_version, latency_ms
           FROM policy_decisions
          WHERE tenant_id = $1 AND ($2::uuid IS NULL OR run_id = $2) AND id > $3
          ORDER BY id LIMIT $4`,
        [tenantId, filter.runId ?? null, filter.afterId ?? 0, filter.limit],
      );
      return rows;
    },
  };
}

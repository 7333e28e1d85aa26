import { createBatcher, oneStatementOrEachAlone, preparedStatement, type Pool } from "@steward/platform";

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
  /** The gateway's MCP session the decision was made for, and its mode; null outside MCP. */
  readonly mcpSessionId?: string | null;
  readonly mcpMode?: string | null;
  readonly permit: boolean;
  readonly code: string;
  readonly policyIds: readonly string[];
  readonly policyVersion: number | null;
  readonly latencyMs: number;
  /**
   * The membership roles the decision took from memory (`KnownRoles`), not read for it: the record is written
   * only if the membership holds exactly these when it is written, else it is refused (StaleRolesError) and the
   * decision must be made again. Absent: the roles were read for the decision.
   */
  readonly rememberedRoles?: readonly string[];
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
  mcp_session_id: string | null;
  mcp_mode: string | null;
  permit: boolean;
  code: string;
  policy_ids: string[];
  policy_version: number | null;
  latency_ms: number;
}

/**
 * The decision was made on remembered roles that the membership no longer holds: nothing was recorded, and it
 * must be made again on the roles read now.
 */
export class StaleRolesError extends Error {
  constructor() {
    super("the member's roles changed since they were read: decide again");
    this.name = "StaleRolesError";
  }
}

/** The durable decision log: written before a decision is answered, so nothing runs without a record. */
export interface DecisionLog {
  /**
   * Resolves once the entry is committed; rejects when it could not be written, with StaleRolesError when its
   * remembered roles are no longer the member's.
   */
  record(entry: DecisionEntry): Promise<void>;
  query(tenantId: string, filter: { runId?: string; mcpSessionId?: string; afterId?: number; limit: number }): Promise<DecisionRow[]>;
}

export interface DecisionLogOptions {
  /** Most decisions written by one statement (one commit); the rest wait for the next. Default 100. */
  readonly maxBatch?: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MCP_MODES = new Set(["observe", "execute", "admin"]);
const uuidOrNull = (v: string | null) => (v && UUID.test(v) ? v : null);

/**
 * Any number of decisions in one statement, in the order given (so their ids follow it): one column array each.
 * An entry made on remembered roles ($17, JSON; NULL when read for the decision) is written only when the
 * membership holds exactly them now; the positions of those refused are the answer.
 */
const INSERT_DECISIONS = `
  WITH d AS (
    SELECT e.*, roles_still_held(e.tenant_id, e.user_id, e.remembered) AS current
      FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::uuid[], $7::int[], $8::text[],
                  $9::uuid[], $10::boolean[], $11::text[], $12::jsonb[], $13::int[], $14::float8[], $15::uuid[], $16::text[],
                  $17::jsonb[])
           WITH ORDINALITY AS e(tenant_id, user_id, action, resource_type, resource_id, run_id, step_no, fingerprint,
                                elevation_session_id, permit, code, policy_ids, policy_version, latency_ms,
                                mcp_session_id, mcp_mode, remembered, ord)
  ), recorded AS (
    INSERT INTO policy_decisions (tenant_id, user_id, action, resource_type, resource_id, run_id, step_no, fingerprint,
                                  elevation_session_id, permit, code, policy_ids, policy_version, latency_ms,
                                  mcp_session_id, mcp_mode)
    SELECT d.tenant_id, d.user_id, d.action, d.resource_type, d.resource_id, d.run_id, d.step_no, d.fingerprint,
           d.elevation_session_id, d.permit, d.code,
           ARRAY(SELECT p.id FROM jsonb_array_elements_text(d.policy_ids) WITH ORDINALITY AS p(id, n) ORDER BY p.n),
           d.policy_version, d.latency_ms, d.mcp_session_id, d.mcp_mode
      FROM d WHERE d.current
     ORDER BY d.ord)
  SELECT d.ord::int AS ord FROM d WHERE NOT d.current`;
/** Once per decision batch: prepared (one statement text whatever the batch size, thanks to unnest). */
const insertDecisions = preparedStatement("steward.insert_decisions", INSERT_DECISIONS);

/**
 * One entry as a `policy_decisions` row (column names as keys, `jsonb_populate_record`), for a writer that
 * commits the record in the statement of the work it permits (the gateway creating a run); the same values
 * as the log's own insert.
 */
export function decisionRow(e: DecisionEntry): Record<string, unknown> {
  const mcpSessionId = uuidOrNull(e.mcpSessionId ?? null);
  return {
    tenant_id: e.tenantId,
    user_id: e.userId,
    action: e.action,
    resource_type: e.resourceType,
    resource_id: e.resourceId,
    run_id: uuidOrNull(e.runId),
    step_no: e.stepNo,
    fingerprint: e.fingerprint,
    elevation_session_id: uuidOrNull(e.elevationSessionId),
    permit: e.permit,
    code: e.code,
    policy_ids: [...e.policyIds],
    policy_version: e.policyVersion,
    latency_ms: e.latencyMs,
    mcp_session_id: mcpSessionId,
    mcp_mode: mcpSessionId && MCP_MODES.has(e.mcpMode ?? "") ? e.mcpMode : null,
  };
}

/** The columns of INSERT_DECISIONS, in its parameters' order. */
const COLUMNS = [
  "tenant_id",
  "user_id",
  "action",
  "resource_type",
  "resource_id",
  "run_id",
  "step_no",
  "fingerprint",
  "elevation_session_id",
  "permit",
  "code",
  "policy_ids",
  "policy_version",
  "latency_ms",
  "mcp_session_id",
  "mcp_mode",
] as const;

/**
 * The entries as one array per column (each row as `decisionRow` makes it; the policy ids as JSON for jsonb[]),
 * then the remembered roles to check (JSON, or null).
 */
function columnsOf(entries: readonly DecisionEntry[]): unknown[] {
  const rows = entries.map(decisionRow);
  const columns = COLUMNS.map((c) => rows.map((r) => (c === "policy_ids" ? JSON.stringify(r[c]) : r[c])));
  return [...columns, entries.map((e) => (e.rememberedRoles ? JSON.stringify(e.rememberedRoles) : null))];
}

/**
 * The decision log over PostgreSQL, with group commit: the decisions that arrive while a write is in flight
 * are written together by the next one (one multi-row INSERT, one transaction, one fsync), at most `maxBatch`
 * at a time. Each caller's promise settles only when the statement holding its entry has committed, so a
 * decision is still answered only after its record is durable. A failed write fails every caller in it; an
 * entry PostgreSQL refuses (bad data) fails only its own caller (the batch is then written entry by entry).
 */
export function createPgDecisionLog(pool: Pool, options: DecisionLogOptions = {}): DecisionLog {
  const writes = createBatcher<DecisionEntry, boolean>(
    (entries) =>
      oneStatementOrEachAlone(entries, async (some) => {
        const { rows } = await pool.query<{ ord: number }>(insertDecisions(columnsOf(some)));
        const refused = new Set(rows.map((r) => r.ord));
        return some.map((_, i) => !refused.has(i + 1));
      }),
    { maxBatch: options.maxBatch },
  );
  return {
    async record(entry) {
      if (!(await writes.submit(entry))) throw new StaleRolesError();
    },
    async query(tenantId, filter) {
      if (filter.runId !== undefined && !UUID.test(filter.runId)) return [];
      if (filter.mcpSessionId !== undefined && !UUID.test(filter.mcpSessionId)) return [];
      const { rows } = await pool.query<DecisionRow>(
        `SELECT id, decided_at, tenant_id, user_id, action, resource_type, resource_id, run_id, step_no, fingerprint,
                elevation_session_id, mcp_session_id, mcp_mode, permit, code, policy_ids, policy_version, latency_ms
           FROM policy_decisions
          WHERE tenant_id = $1 AND ($2::uuid IS NULL OR run_id = $2) AND ($5::uuid IS NULL OR mcp_session_id = $5) AND id > $3
          ORDER BY id LIMIT $4`,
        [tenantId, filter.runId ?? null, filter.afterId ?? 0, filter.limit, filter.mcpSessionId ?? null],
      );
      return rows;
    },
  };
}

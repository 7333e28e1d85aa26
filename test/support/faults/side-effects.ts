import type pg from "pg";
import { toolFingerprint } from "@steward/contract";

/** What one (run, key) left behind: how many times it happened, when first and last (server clock, µs since the epoch). */
export interface EffectRow {
  readonly run_id: string;
  readonly key: string;
  readonly count: number;
  readonly first_us: string;
  readonly last_us: string;
  /** The fingerprint of the tool call that makes it: the permit for it is logged under this fingerprint. */
  readonly fingerprint: string;
}

/**
 * The side effect of the tool a fault suite's runs call, as PostgreSQL holds it: the process suites' `test_counter`
 * (a test hook), the container suite's notes (`save_note`, a real tool).
 */
export interface SideEffects {
  /** The tool whose calls make the effects (the policy decision log's resource id). */
  readonly tool: string;
  /** The effects of `runIds`, one row per (run, key). */
  read(pool: pg.Pool, runIds: readonly string[]): Promise<EffectRow[]>;
}

/** A timestamp column as microseconds since the epoch, exactly (a JavaScript Date keeps milliseconds only). */
export const micros = (column: string): string => `(extract(epoch FROM ${column}) * 1000000)::bigint::text`;

/** test_counter's count per (run, key), every call carrying `delayMs` (part of its fingerprint). */
export function counterEffects(delayMs: number): SideEffects {
  return {
    tool: "test_counter",
    async read(pool, runIds) {
      const { rows } = await pool.query<Omit<EffectRow, "fingerprint">>(
        `SELECT run_id::text, key, count, ${micros("first_at")} AS first_us, ${micros("last_at")} AS last_us
           FROM test_side_effects WHERE run_id = ANY($1::uuid[])`,
        [runIds],
      );
      return rows.map((r) => ({ ...r, fingerprint: toolFingerprint("test_counter", { key: r.key, delay_ms: delayMs }) }));
    },
  };
}

/** A permit the PDP logged for one of the runs' calls of `tool`: its fingerprint and when (µs, server clock). */
export interface PermitTime {
  readonly run_id: string;
  readonly fingerprint: string;
  readonly decided_us: string;
}

export async function permitTimes(pool: pg.Pool, runIds: readonly string[], tool: string): Promise<PermitTime[]> {
  const { rows } = await pool.query<PermitTime>(
    `SELECT run_id::text, fingerprint, ${micros("decided_at")} AS decided_us FROM policy_decisions
      WHERE run_id = ANY($1::uuid[]) AND resource_type = 'tool' AND resource_id = $2 AND permit`,
    [runIds, tool],
  );
  return rows;
}

/** How many of `permits` were for the same run and call as `effect` and came no later than `atUs`. */
export function permitsBefore(permits: readonly PermitTime[], effect: EffectRow, atUs: string): number {
  const at = BigInt(atUs);
  return permits.filter((p) => p.run_id === effect.run_id && p.fingerprint === effect.fingerprint && BigInt(p.decided_us) <= at).length;
}

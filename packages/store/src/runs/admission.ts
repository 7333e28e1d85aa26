import type { Pool, PoolClient } from "pg";
import { busNames, requestRun, runRequestedMessage, type StoredRunEvent } from "@steward/contract";
import { inTransaction, preparedStatement } from "@steward/platform";
import { EVENT_COLUMNS, rowToEvent, type EventRow } from "../event-store/read-stream";
import { enqueueOutbox } from "../outbox/enqueue";

/**
 * Admissions of one tenant are decided one at a time (a transaction-level advisory lock per tenant, taken by
 * `lock_tenant_admissions`), so two runners claiming at once cannot both take the last place. The count of a
 * tenant's runs in flight is `tenant_runs_in_flight` (migration 031), for `admit_run` too.
 */
async function lockTenant(client: PoolClient, tenantId: string): Promise<void> {
  await client.query("SELECT lock_tenant_admissions($1)", [tenantId]);
}

async function inFlight(client: PoolClient, tenantId: string): Promise<number> {
  const { rows } = await client.query<{ n: number }>("SELECT tenant_runs_in_flight($1) AS n", [tenantId]);
  return rows[0].n;
}

/**
 * The header of a new run's command (the gateway's, at its creation, set by `runRequestedMessage`): its runner
 * asks for the run's admission first instead of trying the claim that a run not yet admitted cannot pass. A hint
 * only: a wrong one costs a round trip.
 */
export { NEW_RUN_HEADER } from "@steward/contract";

export type Admission =
  /** Admitted and leased to the caller, with the run's events read by the same transaction. */
  { readonly kind: "admitted"; readonly events: StoredRunEvent[] } | { readonly kind: "deferred" } | { readonly kind: "unchanged" };

/** What an admission asks for: the tenant's runs, the runner that would drive them, its lease, the tenant's limit. */
export interface AdmissionAsk {
  readonly tenantId: string;
  readonly owner: string;
  readonly leaseMs: number;
  readonly maxRunning: number;
}

/**
 * On the way from a new run's command to its run.started, so prepared and one round trip: `admit_runs` (migration 032)
 * takes the tenant's lock, then (a statement of its own, so its snapshot sees every admission committed before the
 * lock was granted) counts, admits or defers each run in the order given, and reads the admitted runs' events; the
 * statement's commit releases the lock.
 */
const admitStatement = preparedStatement("steward.admit_runs", `SELECT run_id, admitted, ${EVENT_COLUMNS} FROM admit_runs($1, $2, $3, $4, $5)`);

/**
 * Admits queued runs of one tenant and claims their leases while the tenant has fewer than `maxRunning` runs in
 * flight, in the order given; the rest are marked deferred (they stay queued; `admitDeferred` puts them on the bus
 * again when a place frees). One outcome per run, in order. `unchanged`: the run was admitted meanwhile, ended, or
 * is leased by another runner: claim it as usual.
 */
export async function admitRuns(pool: Pool, ask: AdmissionAsk, runIds: readonly string[]): Promise<Admission[]> {
  const { rows } = await pool.query<EventRow & { run_id: string; admitted: boolean }>(
    admitStatement([runIds, ask.tenantId, ask.owner, Math.trunc(ask.maxRunning), ask.leaseMs / 1000]),
  );
  // Per admitted run its events (none when a row of NULL events stands for it); a deferred run has one row.
  const admitted = new Map<string, StoredRunEvent[]>();
  const deferred = new Set<string>();
  for (const row of rows) {
    if (!row.admitted) {
      deferred.add(row.run_id);
      continue;
    }
    let events = admitted.get(row.run_id);
    if (!events) admitted.set(row.run_id, (events = []));
    if (row.event_id !== null) events.push(rowToEvent(row));
  }
  return runIds.map((id): Admission => {
    const events = admitted.get(id);
    if (events) return { kind: "admitted", events };
    return deferred.has(id) ? { kind: "deferred" } : { kind: "unchanged" };
  });
}

/** One queued run's admission (`admitRuns` for one run). */
export async function admitRun(pool: Pool, input: AdmissionAsk & { runId: string }): Promise<Admission> {
  return (await admitRuns(pool, input, [input.runId]))[0];
}

/** SQL: a row when a queued run of the tenant (`tenant`, an expression) waits for a place, else none. */
export const DEFERRED_PROBE = (tenant: string): string =>
  `SELECT 1 FROM runs WHERE tenant_id = ${tenant} AND deferred_at IS NOT NULL AND state = 'queued' LIMIT 1`;

/** Once per run that ends or starts waiting: prepared. */
const deferredProbe = preparedStatement("steward.deferred_probe", DEFERRED_PROBE("$1"));

/** Whether a queued run of the tenant waits for a place: one indexed probe, no lock. */
export async function deferredRunWaits(pool: Pool, tenantId: string): Promise<boolean> {
  return ((await pool.query(deferredProbe([tenantId]))).rowCount ?? 0) > 0;
}

/**
 * Admits the tenant's oldest deferred runs while it has places, and puts their commands on the bus (through
 * the outbox, in the same transaction). Called when one of its runs ends or starts waiting, and by the
 * reaper's sweep as a safety net. Cheap when nothing is deferred: one indexed probe, no lock; none at all when
 * the caller has just probed (`probed`: a deferred run was found).
 */
export async function admitDeferred(
  pool: Pool,
  namespace: string,
  tenantId: string,
  maxRunning: number,
  options: { probed?: boolean } = {},
): Promise<string[]> {
  if (!options.probed && !(await deferredRunWaits(pool, tenantId))) return [];
  const names = busNames(namespace);
  return inTransaction(pool, async (client) => {
    await lockTenant(client, tenantId);
    const places = maxRunning - (await inFlight(client, tenantId));
    if (places <= 0) return [];
    const { rows } = await client.query<{ id: string; created_by: string; elevation_session_id: string | null; at: string }>(
      `UPDATE runs SET admitted_at = clock_timestamp(), deferred_at = NULL, last_requested_at = clock_timestamp()
        WHERE id IN (SELECT id FROM runs WHERE tenant_id = $1 AND deferred_at IS NOT NULL AND state = 'queued'
                      ORDER BY created_at, id LIMIT $2 FOR UPDATE SKIP LOCKED)
        RETURNING id, created_by, elevation_session_id::text, (extract(epoch FROM last_requested_at) * 1000)::bigint::text AS at`,
      [tenantId, places],
    );
    await enqueueOutbox(
      client,
      rows.map((r) => {
        const run = { id: r.id, tenantId: tenantId, createdBy: r.created_by, elevationSessionId: r.elevation_session_id };
        return runRequestedMessage(names, requestRun(run, { kind: "admitted", requestedAtMs: r.at }));
      }),
    );
    return rows.map((r) => r.id);
  });
}

/** Tenants with deferred runs (for the reaper's sweep). */
export async function tenantsWithDeferredRuns(pool: Pool, limit = 1000): Promise<string[]> {
  const { rows } = await pool.query<{ tenant_id: string }>("SELECT DISTINCT tenant_id FROM runs WHERE deferred_at IS NOT NULL AND state = 'queued' LIMIT $1", [
    limit,
  ]);
  return rows.map((r) => r.tenant_id);
}

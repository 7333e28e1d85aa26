import type { Pool, PoolClient } from "pg";
import { busNames, type RunRequested, type StoredRunEvent } from "@steward/contract";
import { inTransaction, isQueryTimeout, releaseClient } from "@steward/platform";
import { EVENT_COLUMNS, rowToEvent, type EventRow } from "../event-store/read-stream";
import { enqueueOutbox } from "../outbox/enqueue";

/**
 * Admissions of one tenant are decided one at a time (a transaction-level advisory lock per tenant), so two
 * runners claiming at once cannot both take the last place.
 */
const lockTenantSql = (tenant: string) => `SELECT pg_advisory_xact_lock(hashtextextended('steward.admission.' || ${tenant}, 0))`;

/** The tenant's admitted runs that are not finished and not waiting for a person, counted as `n`. */
const inFlightSql = (tenant: string) =>
  `SELECT count(*)::int AS n FROM runs WHERE tenant_id = ${tenant} AND admitted_at IS NOT NULL AND state IN ('queued', 'running')`;

async function lockTenant(client: PoolClient, tenantId: string): Promise<void> {
  await client.query(lockTenantSql("$1"), [tenantId]);
}

async function inFlight(client: PoolClient, tenantId: string): Promise<number> {
  const { rows } = await client.query<{ n: number }>(inFlightSql("$1"), [tenantId]);
  return rows[0].n;
}

/**
 * The header of a new run's command (the gateway's, at its creation): its runner asks for the run's admission
 * first instead of trying the claim that a run not yet admitted cannot pass. A hint only: a wrong one costs a
 * round trip.
 */
export const NEW_RUN_HEADER = "Steward-New-Run";

export type Admission =
  /** Admitted and leased to the caller, with the run's events read by the same transaction. */
  | { readonly kind: "admitted"; readonly events: StoredRunEvent[] }
  | { readonly kind: "deferred" }
  | { readonly kind: "unchanged" };

/**
 * Admits a queued run and claims its lease when its tenant has fewer than `maxRunning` runs in flight;
 * otherwise marks it deferred (it stays queued; `admitDeferred` puts it on the bus again when a place frees).
 * `unchanged`: the run was admitted meanwhile, ended, or is leased by another runner: claim it as usual.
 *
 * On the way from a new run's command to its run.started, so one round trip: the tenant's lock, then (a statement
 * of its own, so its snapshot sees every admission committed before the lock was granted) the count, the
 * admission or deferral and the run's events, then the commit, sent as one simple query (values as literals).
 */
export async function admitRun(
  pool: Pool,
  input: { runId: string; tenantId: string; owner: string; leaseMs: number; maxRunning: number },
): Promise<Admission> {
  const client = await pool.connect();
  const run = client.escapeLiteral(input.runId);
  const tenant = client.escapeLiteral(input.tenantId);
  const owner = client.escapeLiteral(input.owner);
  const max = Math.trunc(input.maxRunning);
  const seconds = Number(input.leaseMs / 1000);
  const sql = `BEGIN;
${lockTenantSql(tenant)};
WITH target AS (
  SELECT id, lease_owner, lease_until FROM runs
   WHERE id = ${run} AND tenant_id = ${tenant} AND state = 'queued' AND admitted_at IS NULL FOR UPDATE),
flight AS (${inFlightSql(tenant)}),
decided AS (
  UPDATE runs r
     SET admitted_at = CASE WHEN f.n < ${max} THEN clock_timestamp() END,
         deferred_at = CASE WHEN f.n < ${max} THEN NULL ELSE coalesce(r.deferred_at, clock_timestamp()) END,
         lease_owner = CASE WHEN f.n < ${max} THEN ${owner} ELSE r.lease_owner END,
         lease_until = CASE WHEN f.n < ${max} THEN clock_timestamp() + make_interval(secs => ${seconds}) ELSE r.lease_until END
    FROM target t, flight f
   WHERE r.id = t.id AND (f.n >= ${max} OR t.lease_owner IS NULL OR t.lease_owner = ${owner} OR t.lease_until < clock_timestamp())
  RETURNING r.admitted_at IS NOT NULL AS admitted)
SELECT d.admitted, ${EVENT_COLUMNS} FROM decided d LEFT JOIN events ON d.admitted AND stream_id = ${run} ORDER BY version;
COMMIT`;
  let rows: Array<EventRow & { admitted: boolean }>;
  try {
    const results = (await client.query(sql)) as unknown as { rows: Array<EventRow & { admitted: boolean }> }[];
    rows = results[2].rows;
  } catch (err) {
    if (!isQueryTimeout(err)) await client.query("ROLLBACK").catch(() => undefined);
    releaseClient(client, err);
    throw err;
  }
  releaseClient(client);
  if (rows.length === 0) return { kind: "unchanged" };
  if (!rows[0].admitted) return { kind: "deferred" };
  return { kind: "admitted", events: rows.filter((r) => r.event_id !== null).map(rowToEvent) };
}

/**
 * Admits the tenant's oldest deferred runs while it has places, and puts their commands on the bus (through
 * the outbox, in the same transaction). Called when one of its runs ends or starts waiting, and by the
 * reaper's sweep as a safety net. Cheap when nothing is deferred: one indexed probe, no lock.
 */
export async function admitDeferred(pool: Pool, namespace: string, tenantId: string, maxRunning: number): Promise<string[]> {
  const probe = await pool.query("SELECT 1 FROM runs WHERE tenant_id = $1 AND deferred_at IS NOT NULL AND state = 'queued' LIMIT 1", [tenantId]);
  if (probe.rowCount === 0) return [];
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
        const command: RunRequested = { run_id: r.id, tenant_id: tenantId, created_by: r.created_by };
        if (r.elevation_session_id) command.elevation_session_id = r.elevation_session_id;
        return { subject: names.runRequested, msgId: `run.requested.${r.id}.${r.at}`, payload: command, headers: { "Steward-Run-Id": r.id, "Steward-Admitted": "true" }, runId: r.id };
      }),
    );
    return rows.map((r) => r.id);
  });
}

/** Tenants with deferred runs (for the reaper's sweep). */
export async function tenantsWithDeferredRuns(pool: Pool, limit = 1000): Promise<string[]> {
  const { rows } = await pool.query<{ tenant_id: string }>(
    "SELECT DISTINCT tenant_id FROM runs WHERE deferred_at IS NOT NULL AND state = 'queued' LIMIT $1",
    [limit],
  );
  return rows.map((r) => r.tenant_id);
}

import type { Pool, PoolClient } from "pg";
import { busNames, type RunRequested } from "@steward/contract";
import { inTransaction } from "@steward/platform";
import { enqueueOutbox } from "../outbox/enqueue";

/**
 * Admissions of one tenant are decided one at a time (a transaction-level advisory lock per tenant), so two
 * runners claiming at once cannot both take the last place.
 */
async function lockTenant(client: PoolClient, tenantId: string): Promise<void> {
  await client.query("SELECT pg_advisory_xact_lock(hashtextextended('steward.admission.' || $1, 0))", [tenantId]);
}

/** The tenant's admitted runs that are not finished and not waiting for a person. */
async function inFlight(client: PoolClient, tenantId: string): Promise<number> {
  const { rows } = await client.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM runs WHERE tenant_id = $1 AND admitted_at IS NOT NULL AND state IN ('queued', 'running')",
    [tenantId],
  );
  return rows[0].n;
}

export type Admission = { readonly kind: "admitted" } | { readonly kind: "deferred" } | { readonly kind: "unchanged" };

/**
 * Admits a queued run and claims its lease when its tenant has fewer than `maxRunning` runs in flight;
 * otherwise marks it deferred (it stays queued; `admitDeferred` puts it on the bus again when a place frees).
 * `unchanged`: the run was admitted meanwhile, ended, or is leased by another runner: claim it as usual.
 */
export async function admitRun(
  pool: Pool,
  input: { runId: string; tenantId: string; owner: string; leaseMs: number; maxRunning: number },
): Promise<Admission> {
  return inTransaction(pool, async (client) => {
    await lockTenant(client, input.tenantId);
    const { rows } = await client.query<{ admitted: boolean }>(
      "SELECT admitted_at IS NOT NULL AS admitted FROM runs WHERE id = $1 AND tenant_id = $2 AND state = 'queued' FOR UPDATE",
      [input.runId, input.tenantId],
    );
    if (!rows[0] || rows[0].admitted) return { kind: "unchanged" };
    if ((await inFlight(client, input.tenantId)) >= input.maxRunning) {
      await client.query("UPDATE runs SET deferred_at = coalesce(deferred_at, clock_timestamp()) WHERE id = $1", [input.runId]);
      return { kind: "deferred" };
    }
    const claimed = await client.query(
      `UPDATE runs SET admitted_at = clock_timestamp(), deferred_at = NULL,
              lease_owner = $2, lease_until = clock_timestamp() + make_interval(secs => $3)
        WHERE id = $1 AND (lease_owner IS NULL OR lease_owner = $2 OR lease_until < clock_timestamp())`,
      [input.runId, input.owner, input.leaseMs / 1000],
    );
    return claimed.rowCount === 1 ? { kind: "admitted" } : { kind: "unchanged" };
  });
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

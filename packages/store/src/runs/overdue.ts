import type { Pool } from "pg";
import { busNames, requestRun, runRequestedMessage } from "@steward/contract";
import { inTransaction } from "@steward/platform";
import { enqueueOutbox } from "../outbox/enqueue";

/** Runs still queued or running past their deadline, oldest deadline first. */
export async function findOverdueRuns(pool: Pool, limit = 100): Promise<Array<{ id: string; tenant_id: string }>> {
  const { rows } = await pool.query<{ id: string; tenant_id: string }>(
    `SELECT id, tenant_id FROM runs
      WHERE state IN ('queued', 'running') AND deadline_at < clock_timestamp()
      ORDER BY deadline_at LIMIT $1`,
    [limit],
  );
  return rows;
}

/** Runs that have waited for the user longer than `waitSeconds`. */
export async function findUnansweredRuns(pool: Pool, waitSeconds: number, limit = 100): Promise<Array<{ id: string; tenant_id: string }>> {
  const { rows } = await pool.query<{ id: string; tenant_id: string }>(
    `SELECT id, tenant_id FROM runs
      WHERE state IN ('awaiting_input', 'awaiting_confirmation')
        AND awaiting_since < clock_timestamp() - make_interval(secs => $1)
      ORDER BY awaiting_since LIMIT $2`,
    [waitSeconds, limit],
  );
  return rows;
}

/**
 * Puts `agent.run.requested` on the bus again for stranded runs: queued longer than `olderThanMs` since their
 * last request (the first copy may have been lost: nats-server 2.9 acknowledges before it syncs to disk), or
 * running with nobody's live lease and no request for as long (their command is gone: acked by a runner that
 * lost the lease, or out of deliveries). The command goes through the outbox like any other; a run that was
 * in fact delivered is unharmed, because a second delivery finds the run claimed or finished. A deferred
 * run is not stranded: it waits for a place of its tenant (admission.ts).
 */
export async function redriveStrandedRuns(pool: Pool, namespace: string, olderThanMs: number, limit = 100): Promise<string[]> {
  const names = busNames(namespace);
  return inTransaction(pool, async (client) => {
    const { rows } = await client.query<{ id: string; tenant_id: string; created_by: string; elevation_session_id: string | null; at: string }>(
      `UPDATE runs SET last_requested_at = clock_timestamp()
        WHERE id IN (SELECT id FROM runs
                      WHERE state IN ('queued', 'running')
                        AND last_requested_at < clock_timestamp() - make_interval(secs => $1)
                        AND (state = 'queued' OR lease_until IS NULL OR lease_until < clock_timestamp())
                        AND deferred_at IS NULL
                      ORDER BY last_requested_at LIMIT $2 FOR UPDATE SKIP LOCKED)
        RETURNING id, tenant_id, created_by, elevation_session_id::text, (extract(epoch FROM last_requested_at) * 1000)::bigint::text AS at`,
      [olderThanMs / 1000, limit],
    );
    await enqueueOutbox(
      client,
      rows.map((r) => {
        const run = { id: r.id, tenantId: r.tenant_id, createdBy: r.created_by, elevationSessionId: r.elevation_session_id };
        return runRequestedMessage(names, requestRun(run, { kind: "redriven", requestedAtMs: r.at }));
      }),
    );
    return rows.map((r) => r.id);
  });
}

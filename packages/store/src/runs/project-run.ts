import type { PoolClient } from "pg";
import type { RunState } from "@steward/contract";

/** Writes the runs read model from the folded state, in the caller's transaction. */
export async function projectRun(
  client: PoolClient,
  run: { id: string; tenantId: string; idempotencyKey?: string | null; requestHash?: string | null },
  state: RunState,
): Promise<void> {
  await client.query(
    `INSERT INTO runs (id, tenant_id, created_by, thread_id, state, mode, input, response_language, created_at,
                       started_at, finished_at, deadline_at, output, error, usage, version, idempotency_key, request_hash,
                       elevation_session_id, awaiting_since)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
     ON CONFLICT (id) DO UPDATE SET
       created_by = excluded.created_by, thread_id = excluded.thread_id, mode = excluded.mode, input = excluded.input,
       response_language = excluded.response_language, created_at = excluded.created_at,
       elevation_session_id = excluded.elevation_session_id,
       state = excluded.state, started_at = excluded.started_at, finished_at = excluded.finished_at,
       output = excluded.output, error = excluded.error, usage = excluded.usage, version = excluded.version,
       deadline_at = excluded.deadline_at, awaiting_since = excluded.awaiting_since,
       lease_owner = CASE WHEN excluded.state IN ('succeeded', 'failed', 'cancelled') THEN NULL ELSE runs.lease_owner END,
       lease_until = CASE WHEN excluded.state IN ('succeeded', 'failed', 'cancelled') THEN NULL ELSE runs.lease_until END`,
    [
      run.id,
      run.tenantId,
      state.created_by,
      state.thread_id,
      state.status,
      state.mode,
      state.input,
      state.response_language,
      state.created_at,
      state.started_at,
      state.finished_at,
      state.deadline_at,
      state.output === null ? null : JSON.stringify(state.output),
      state.error === null ? null : JSON.stringify(state.error),
      JSON.stringify(state.usage),
      state.version,
      run.idempotencyKey ?? null,
      run.requestHash ?? null,
      state.elevation_session_id,
      state.awaiting?.since ?? null,
    ],
  );
}

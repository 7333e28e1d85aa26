import type { PoolClient } from "pg";
import type { RunState } from "@steward/contract";

export interface RunRowKey {
  readonly id: string;
  readonly tenantId: string;
  readonly idempotencyKey?: string | null;
  readonly requestHash?: string | null;
}

/** The runs columns the projection writes, in the order of `runRowValues`. */
export const RUN_COLUMNS = `id, tenant_id, created_by, thread_id, state, mode, input, response_language, created_at,
  started_at, finished_at, deadline_at, output, error, usage, version, idempotency_key, request_hash,
  elevation_session_id, awaiting_since`;

/** The columns only `run.queued` sets: fixed once the row exists. */
const SET_AT_CREATION = `created_by = excluded.created_by, thread_id = excluded.thread_id, mode = excluded.mode,
  input = excluded.input, response_language = excluded.response_language, created_at = excluded.created_at,
  elevation_session_id = excluded.elevation_session_id`;

/** The columns a run's later events change (an ended run's lease is let go; an open run's is kept). */
const SET_AS_IT_GOES = `state = excluded.state, started_at = excluded.started_at, finished_at = excluded.finished_at,
  output = excluded.output, error = excluded.error, usage = excluded.usage, version = excluded.version,
  deadline_at = excluded.deadline_at, awaiting_since = excluded.awaiting_since,
  lease_owner = CASE WHEN excluded.state IN ('succeeded', 'failed', 'cancelled') THEN NULL ELSE runs.lease_owner END,
  lease_until = CASE WHEN excluded.state IN ('succeeded', 'failed', 'cancelled') THEN NULL ELSE runs.lease_until END`;

/** What an existing row takes from a fold of all its events (a rebuild): every column (the idempotency record kept). */
export const RUN_UPSERT = `ON CONFLICT (id) DO UPDATE SET
  ${SET_AT_CREATION},
  ${SET_AS_IT_GOES}`;

/**
 * What an existing row takes from an append's fold: the columns events after `run.queued` change, and where the
 * new events stand on the bus (the insert's `events_subject` and `publish_held_until`; not settled), and how far
 * the earlier ones are (the insert's `published_version`: what its writer knows acknowledged, never lowered). The
 * row was written with `run.queued` itself, so the others are already the fold's. A value set again is stored
 * again, even when equal: a long input, compressed and kept out of line, would be compressed and written anew with
 * each append.
 */
export const RUN_APPEND_UPSERT = `ON CONFLICT (id) DO UPDATE SET
  ${SET_AS_IT_GOES},
  events_subject = excluded.events_subject, publish_held_until = excluded.publish_held_until, bus_settled = false,
  published_version = greatest(runs.published_version, excluded.published_version)`;

/** The values of RUN_COLUMNS for a folded run, its JSON columns (output, error, usage) as values. */
function runRow(run: RunRowKey, state: RunState): unknown[] {
  return [
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
    state.output,
    state.error,
    state.usage,
    state.version,
    run.idempotencyKey ?? null,
    run.requestHash ?? null,
    state.elevation_session_id,
    state.awaiting?.since ?? null,
  ];
}

const RUN_COLUMN_NAMES = RUN_COLUMNS.split(",").map((c) => c.trim());
const JSON_COLUMNS = new Set(["output", "error", "usage"]);

/** The values of RUN_COLUMNS for a folded run, as statement parameters. */
export function runRowValues(run: RunRowKey, state: RunState): unknown[] {
  return runRow(run, state).map((v, i) => (v !== null && JSON_COLUMNS.has(RUN_COLUMN_NAMES[i]) ? JSON.stringify(v) : v));
}

/** A folded run as a runs row in JSON, its column names as keys (`jsonb_populate_record(NULL::runs, …)`). */
export function runRowJson(run: RunRowKey, state: RunState): Record<string, unknown> {
  const row = runRow(run, state);
  return Object.fromEntries(RUN_COLUMN_NAMES.map((c, i) => [c, row[i]]));
}

/** The SQL parameter list `$from, $from+1, …` of the 20 run columns. */
export function runRowParams(from: number): string {
  return Array.from({ length: 20 }, (_, i) => `$${from + i}`).join(", ");
}

/**
 * Writes the runs read model from the folded state, in the caller's transaction (a rebuild: the events it folds
 * are not new, so a row it creates counts them as on the bus, and an existing row keeps where they stand).
 */
export async function projectRun(client: PoolClient, run: RunRowKey, state: RunState): Promise<void> {
  await client.query(
    `INSERT INTO runs (${RUN_COLUMNS}, published_version, bus_settled)
     VALUES (${runRowParams(1)}, $16, $5 IN ('succeeded', 'failed', 'cancelled')) ${RUN_UPSERT}`,
    runRowValues(run, state),
  );
}

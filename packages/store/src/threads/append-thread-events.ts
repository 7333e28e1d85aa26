import type { Pool, PoolClient } from "pg";
import { foldThread, type ThreadEvent, type ThreadState } from "@steward/contract";
import { ConcurrencyError, timeOrderedId } from "@steward/platform";
import { appendFailure, insertEventsAtVersion } from "../event-store/append-at-version";

export interface AppendThreadEventsInput {
  readonly threadId: string;
  readonly tenantId: string;
  /** The thread as folded so far (or as its projection row holds it); its `version` is the expected stream version. */
  readonly state: ThreadState;
  readonly events: readonly ThreadEvent[];
  readonly traceparent?: string;
  /** Recorded with the projection row when it is created (POST /v1/threads with an Idempotency-Key). */
  readonly idempotencyKey?: string | null;
  readonly requestHash?: string | null;
}

/**
 * One statement: the events (inserted only when the stream is at the expected version; a racing appender hits
 * the unique (stream_id, version) constraint) and the threads projection from the fold. No outbox copies:
 * nothing consumes a thread's events from the bus yet, and the run event subjects are the runs' alone.
 */
const APPEND_THREAD_EVENTS = `
WITH ${insertEventsAtVersion("version")},
projection AS (
  INSERT INTO threads (id, tenant_id, created_by, title, status, created_at, updated_at, archived_at, run_count,
                       last_run_id, version, idempotency_key, request_hash, forked_from_thread_id, forked_from_run_id,
                       inherited_run_ids)
  SELECT $1, $2, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21::uuid[] WHERE EXISTS (SELECT 1 FROM ins)
  -- A fork's origin is set with its creation only (thread.forked follows thread.created): never updated.
  ON CONFLICT (id) DO UPDATE SET
    title = excluded.title, status = excluded.status, updated_at = excluded.updated_at,
    archived_at = excluded.archived_at, run_count = excluded.run_count, last_run_id = excluded.last_run_id,
    version = excluded.version)
SELECT version FROM ins ORDER BY version`;

/**
 * The one write path of a thread: append its events with optimistic concurrency on the state's version and
 * write the projection, in one statement (in the caller's transaction when given a client). Resolves with the
 * new state.
 */
export async function appendThreadEvents(db: Pool | PoolClient, input: AppendThreadEventsInput): Promise<ThreadState> {
  const state = foldThread(input.events, input.state);
  if (state.status === "new") throw new RangeError(`thread ${input.threadId} has no thread.created event`);
  let appended: number;
  try {
    const { rowCount } = await db.query(APPEND_THREAD_EVENTS, [
      input.threadId,
      input.tenantId,
      input.state.version,
      input.events.map(() => timeOrderedId()),
      input.events.map((e) => e.type),
      input.events.map((e) => JSON.stringify(e.data)),
      JSON.stringify(input.traceparent ? { traceparent: input.traceparent } : {}),
      state.created_by,
      state.title,
      state.status,
      state.created_at,
      state.updated_at,
      state.archived_at,
      state.run_count,
      state.last_run_id,
      state.version,
      input.idempotencyKey ?? null,
      input.requestHash ?? null,
      state.forked_from?.thread_id ?? null,
      state.forked_from?.run_id ?? null,
      state.inherited_run_ids,
    ]);
    appended = rowCount ?? 0;
  } catch (err) {
    throw appendFailure(err, input.threadId, input.state.version);
  }
  if (appended !== input.events.length) throw new ConcurrencyError(input.threadId, input.state.version);
  return state;
}

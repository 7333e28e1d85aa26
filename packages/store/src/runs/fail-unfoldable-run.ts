import type { Pool } from "pg";
import {
  decide,
  initialRunState,
  parseMicros,
  nowMicros,
  terminalStatuses,
  type IsoMicros,
  type RunError,
  type RunMode,
  type RunOutput,
  type RunState,
  type RunStatus,
  type StoredRunEvent,
  type Usage,
} from "@steward/contract";
import { appendRunEvents } from "./append-run-events";

interface ProjectedRun {
  state: RunStatus;
  created_by: string;
  thread_id: string | null;
  mode: RunMode;
  input: string;
  response_language: string | null;
  created_at: IsoMicros;
  started_at: IsoMicros | null;
  finished_at: IsoMicros | null;
  deadline_at: IsoMicros;
  output: RunOutput | null;
  error: RunError | null;
  usage: Usage;
  elevation_session_id: string | null;
  last_seq: number;
}

/**
 * Ends a run whose stored events cannot be folded (corrupt, out of order) with the run decider's `run.failed`
 * (the `unfoldable` command, 60302), through the one write path. Folding is what cannot be done, so the state
 * decided and appended on is the runs projection's, at the stream's last stored seq (the expected version): the
 * projection keeps what it showed and becomes failed.
 * Resolves with the stored event, or null when the run has no projection or has ended already; a writer that
 * appended meanwhile makes it throw ConcurrencyError, as any append does.
 */
export async function failUnfoldableRun(
  pool: Pool,
  input: { readonly runId: string; readonly tenantId: string; readonly namespace: string; readonly traceparent?: string },
): Promise<StoredRunEvent | null> {
  const { rows } = await pool.query<ProjectedRun>(
    `SELECT state, created_by, thread_id, mode, input, response_language, created_at, started_at, finished_at, deadline_at,
            output, error, usage, elevation_session_id,
            (SELECT coalesce(max(version), 0) FROM events WHERE stream_id = runs.id)::int AS last_seq
       FROM runs WHERE id = $1 AND tenant_id = $2`,
    [input.runId, input.tenantId],
  );
  const run = rows[0];
  if (!run || terminalStatuses.includes(run.state)) return null;
  const { last_seq: version, state: status, ...projected } = run;
  const state: RunState = { ...initialRunState, ...projected, status, version };
  const decision = decide({ kind: "unfoldable" }, state, { now: parseMicros(nowMicros()) });
  if (decision.events.length === 0) return null;
  const { events } = await appendRunEvents(pool, {
    runId: input.runId,
    tenantId: input.tenantId,
    state,
    events: decision.events,
    namespace: input.namespace,
    traceparent: input.traceparent,
  });
  return events[0];
}

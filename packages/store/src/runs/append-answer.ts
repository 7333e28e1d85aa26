import type { RunEvent, StoredRunEvent } from "@steward/contract";
import type { OutboxRow } from "../outbox/outbox-row";

/**
 * The header of a command its writer published itself: the command's outbox id. Every event of the run written
 * before it, and every earlier command of the run, was on the bus before the command was (its writer sends it only
 * once every earlier row it sent of the run is acknowledged). Its receiver passes it on as `publishedThrough`.
 */
export const PUBLISHED_THROUGH_HEADER = "Steward-Published-Through";

/**
 * SQL: what the insert of a run's commands returns, a command its writer publishes itself named by its own id in
 * `Steward-Published-Through` (the stored row has no such header: a relay publishing it later vouches for nothing).
 */
export const COMMAND_RETURNING = `RETURNING id, run_id, subject, msg_id, payload,
            headers || jsonb_build_object('${PUBLISHED_THROUGH_HEADER}', id::text) AS headers, retry_at IS NOT NULL AS direct`;

/** A row of an append's answer: a stored event (part 0), a copy (1) or a command (2) its writer publishes itself. */
export interface AnswerRow {
  part: number;
  event_id: string | null;
  version: number | null;
  recorded_at: string | null;
  outbox_id: string | null;
  subject: string | null;
  msg_id: string | null;
  payload: string | null;
  headers: Record<string, string> | null;
}

/** The appended events as stored: their seq and time from the answer's event rows (part 0, in version order). */
export function storedEvents(
  run: { readonly runId: string; readonly tenantId: string },
  events: readonly RunEvent[],
  ids: readonly string[],
  metadata: { readonly traceparent?: string },
  rows: readonly AnswerRow[],
): StoredRunEvent[] {
  const stored = rows.filter((r) => r.part === 0);
  return events.map((event, i) => ({
    ...event,
    metadata: { event_id: ids[i], run_id: run.runId, tenant_id: run.tenantId, seq: stored[i].version!, recorded_at: stored[i].recorded_at!, ...metadata },
  })) as StoredRunEvent[];
}

/** What the writer publishes itself, in the answer's order: the copies (part 1), then the commands (part 2). */
export function directRows(rows: readonly AnswerRow[]): OutboxRow[] {
  return rows
    .filter((r) => r.part === 1 || r.part === 2)
    .map((r) => ({
      id: r.part === 1 ? r.msg_id! : r.outbox_id!,
      subject: r.subject!,
      msg_id: r.msg_id!,
      payload: r.payload!,
      headers: r.headers!,
      ...(r.part === 1 ? { version: r.version! } : {}),
    }));
}

/**
 * SQL: the first CTE of a statement of several runs, `batch`: each run of the JSON array `$1` (`ord` from 1, the
 * element `j`) with its runs row (`j->'run'`, column names as keys) as columns.
 */
export const RUNS_BATCH = `batch AS (
  SELECT b.ord, b.j, r.*
    FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS b(j, ord)
   CROSS JOIN LATERAL jsonb_populate_record(NULL::runs, b.j->'run') AS r)`;

/** The events of an append as a statement of several runs takes them (JSON): their ids, types and data. */
export function eventsJson(events: readonly RunEvent[], ids: readonly string[]): Array<{ event_id: string; type: string; data: unknown }> {
  return events.map((e, i) => ({ event_id: ids[i], type: e.type, data: e.data }));
}

/**
 * The answer of a statement of several runs, by run (`ord`, from 1, in the order they were given); throws when a run
 * has some of its events stored and not all (the statement writes each run whole or not at all).
 */
export function answersByRun<R extends AnswerRow & { ord: number | string }>(
  rows: readonly R[],
  runs: ReadonlyArray<{ readonly runId: string; readonly events: readonly RunEvent[] }>,
): R[][] {
  const byRun = runs.map(() => [] as R[]);
  for (const row of rows) byRun[Number(row.ord) - 1].push(row);
  byRun.forEach((answer, i) => {
    const stored = answer.filter((r) => r.part === 0).length;
    if (stored !== 0 && stored !== runs[i].events.length) throw new Error(`run ${runs[i].runId}: ${stored} of ${runs[i].events.length} events written`);
  });
  return byRun;
}

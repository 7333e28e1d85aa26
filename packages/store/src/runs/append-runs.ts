import type { Pool } from "pg";
import { busNames, foldRun } from "@steward/contract";
import { ConcurrencyError, createBatcher, preparedStatement, timeOrderedId, togetherOrEachAlone } from "@steward/platform";
import { streamAtVersion } from "../event-store/append-at-version";
import { busCopyColumns } from "../event-store/bus-copy";
import { assertEventsFit } from "../event-store/event-size";
import { RUNS_BATCH, answersByRun, directRows, eventsJson, storedEvents, type AnswerRow } from "./append-answer";
import { DIRECT_GRACE_MS, appendRunEvents, ownFloor, type AppendRunEventsInput, type AppendRunEventsResult } from "./append-run-events";
import { heldFor, mayPublishDirectly } from "./direct-check";
import { RUN_APPEND_UPSERT, RUN_COLUMNS, runRowJson } from "./project-run";

/**
 * The appends of several runs in one statement, so one round trip and one commit for all (`$1`: the appends as a
 * JSON array, one per run; `$2`: how long what their writer publishes itself is kept from the relays, in ms). Each
 * run's events go in only when its stream is at the version its writer expects, apart from the others: a run whose
 * stream moved writes nothing and the rest go on. What `appendRunEvents` checks for one run before its writer may
 * publish the copies itself holds for each run here. The runs' rows are updated in id order, as the marks lock
 * them, so that this statement and a mark never wait for each other in a cycle. The events are all inserted before
 * any runs row is touched (the projection reads `ins`): a racing appender, which holds its run's row, is waited for
 * on the event it inserted first, never while this statement holds a row it needs.
 */
const APPEND_RUNS_SQL = `
WITH ${RUNS_BATCH},
ready AS (
  SELECT * FROM batch b
   WHERE ${streamAtVersion("b.id", "(b.j->>'expected')::int")}),
ins AS (
  INSERT INTO events (event_id, stream_id, tenant_id, version, type, data, metadata)
  SELECT (e.j->>'event_id')::uuid, a.id, a.tenant_id, (a.j->>'expected')::int + e.ord::int, e.j->>'type', e.j->'data', a.j->'metadata'
    FROM ready a CROSS JOIN LATERAL jsonb_array_elements(a.j->'events') WITH ORDINALITY AS e(j, ord)
   ORDER BY a.ord, e.ord
  RETURNING event_id, stream_id, tenant_id, version, type, data, metadata, recorded_at),
-- As in appendRunEvents, run by run (\`mayPublishDirectly\`).
direct AS (
  SELECT a.id FROM ready a
   WHERE (a.j->>'direct')::bool
     AND ${mayPublishDirectly({
       runId: "a.id",
       floor: "(a.j->>'own_floor')::int",
       publishedThrough: "(a.j->>'published_through')::bigint",
       ownCommands: "ARRAY(SELECT jsonb_array_elements_text(a.j->'own_commands')::bigint)",
     })}),
projection AS (
  INSERT INTO runs (${RUN_COLUMNS}, events_subject, publish_held_until, published_version)
  SELECT ${RUN_COLUMNS}, events_subject,
         CASE WHEN d.id IS NOT NULL THEN ${heldFor("$2::float8")} END,
         coalesce(published_version, 0)
    FROM ready a LEFT JOIN direct d USING (id)
   WHERE id IN (SELECT stream_id FROM ins)
   ORDER BY id
  ${RUN_APPEND_UPSERT})
SELECT a.ord, 0 AS part, ins.event_id, ins.version, ins.recorded_at, NULL::bigint AS outbox_id,
       NULL AS subject, NULL AS msg_id, NULL AS payload, NULL::jsonb AS headers
  FROM ins JOIN ready a ON a.id = ins.stream_id
UNION ALL
SELECT a.ord, 1, NULL, ins.version, NULL, NULL, ${busCopyColumns("ins", "a.events_subject")}
  FROM ins JOIN ready a ON a.id = ins.stream_id JOIN direct d ON d.id = a.id
ORDER BY ord, part, version`;
const appendRunsStatement = preparedStatement("steward.append_runs", APPEND_RUNS_SQL);

/** A row of the statement's answer: what an append answers (`AnswerRow`), for the run at `ord` (from 1). */
interface RunAnswerRow extends AnswerRow {
  ord: number;
}

type Settled = PromiseSettledResult<AppendRunEventsResult>;

/**
 * What only the single append carries (commands, an idempotency record), or two appends of one run: PostgreSQL
 * cannot update one row twice in a statement, and the second must see the first's version anyway.
 */
function needsEachAlone(inputs: readonly AppendRunEventsInput[]): boolean {
  const runs = new Set(inputs.map((i) => i.runId));
  return runs.size < inputs.length || inputs.some((i) => (i.commands?.length ?? 0) > 0 || i.idempotencyKey || i.directCommands);
}

/** One statement for the appends of several runs: each run's outcome, a run whose stream moved a ConcurrencyError. */
async function appendTogether(pool: Pool, inputs: readonly AppendRunEventsInput[]): Promise<Settled[]> {
  const prepared = inputs.map((input) => {
    const state = input.folded ?? foldRun(input.events, input.state);
    const ids = input.events.map(() => timeOrderedId());
    const metadata = input.traceparent ? { traceparent: input.traceparent } : {};
    const json = {
      run: {
        ...runRowJson({ id: input.runId, tenantId: input.tenantId }, state),
        events_subject: busNames(input.namespace).runEvent(input.runId, ""),
        published_version: input.markOnBus ?? null,
      },
      expected: input.state.version,
      metadata,
      events: eventsJson(input.events, ids),
      direct: Boolean(input.publishDirect),
      own_floor: ownFloor(input),
      own_commands: input.own?.commandIds ?? [],
      published_through: input.publishedThrough ?? null,
    };
    return { input, state, ids, metadata, json };
  });
  const { rows } = await pool.query<RunAnswerRow>(appendRunsStatement([JSON.stringify(prepared.map((p) => p.json)), DIRECT_GRACE_MS]));
  const byRun = answersByRun(rows, inputs);
  return prepared.map((p, i): Settled => {
    if (!byRun[i].some((r) => r.part === 0)) return { status: "rejected", reason: new ConcurrencyError(p.input.runId, p.input.state.version) };
    return {
      status: "fulfilled",
      value: { events: storedEvents(p.input, p.input.events, p.ids, p.metadata, byRun[i]), state: p.state, direct: directRows(byRun[i]) },
    };
  });
}

/**
 * Appends of several runs (each as `appendRunEvents` would write it alone) in one statement: one round trip and
 * one commit for all, each run's version checked apart. An event over the size limit fails its own append before
 * anything is written. A lone append, or a batch the statement cannot take (see `needsEachAlone`), goes through
 * `appendRunEvents`. When PostgreSQL refuses the statement's data (a racing appender's event took a run's version:
 * 23505), each append is written again alone, so that the loser alone gets its ConcurrencyError. Any other failure
 * (the server unreachable) fails every append of the batch.
 */
export async function appendRuns(pool: Pool, inputs: readonly AppendRunEventsInput[]): Promise<Settled[]> {
  const outcomes: Array<Settled | undefined> = inputs.map((input) => {
    try {
      assertEventsFit(input.runId, input.events);
      return undefined;
    } catch (reason) {
      return { status: "rejected", reason };
    }
  });
  const fit = inputs.filter((_, i) => outcomes[i] === undefined);
  const written = await togetherOrEachAlone(
    fit,
    (input) => appendRunEvents(pool, input),
    needsEachAlone(fit) ? undefined : (some) => appendTogether(pool, some),
  );
  return outcomes.map((o) => o ?? written.shift()!);
}

export interface RunAppender {
  /** Appends as `appendRunEvents` does, in a statement shared with the appends of other runs submitted meanwhile. */
  append(input: AppendRunEventsInput): Promise<AppendRunEventsResult>;
}

/**
 * Groups the appends of concurrent runs: those submitted while a statement is in flight go together in the next
 * (at most `maxBatch`, at most `maxInFlight` statements at once). A lone append waits for no timer, and each caller
 * is answered once the statement holding its append has committed.
 */
export function createRunAppender(pool: Pool, options: { maxBatch?: number; maxInFlight?: number } = {}): RunAppender {
  const batcher = createBatcher<AppendRunEventsInput, AppendRunEventsResult>((batch) => appendRuns(pool, batch), {
    maxBatch: options.maxBatch ?? 32,
    maxInFlight: options.maxInFlight ?? 2,
  });
  return { append: (input) => batcher.submit(input) };
}

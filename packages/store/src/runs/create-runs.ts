import type { Pool } from "pg";
import { busNames, foldRun, initialRunState } from "@steward/contract";
import { preparedStatement, timeOrderedId } from "@steward/platform";
import { busCopyColumns } from "../event-store/bus-copy";
import { assertEventsFit } from "../event-store/event-size";
import { COMMAND_RETURNING, RUNS_BATCH, answersByRun, directRows, eventsJson, storedEvents, type AnswerRow } from "./append-answer";
import { DIRECT_GRACE_MS, type AppendRunEventsInput, type AppendRunEventsResult } from "./append-run-events";
import { heldFor } from "./direct-check";
import { RUN_COLUMNS, runRowJson } from "./project-run";

/** A run not yet written: its first events, its commands, and the permit to create it. */
export interface NewRunInput extends Omit<AppendRunEventsInput, "state" | "folded" | "own" | "publishedThrough"> {
  /**
   * A `policy_decisions` row (column names as keys) committed with the run, only when the run is (the gateway's
   * permit to create it: its record and the run in one commit). Needs INSERT on the decision log.
   */
  readonly permitRecord?: Readonly<Record<string, unknown>> | null;
  /**
   * The membership roles the permit was decided on from memory (`DecisionEntry.rememberedRoles`): the run is not
   * written (`roles_changed`) unless the permit's member holds exactly these roles when the statement runs.
   */
  readonly permitRoles?: readonly string[] | null;
}

/**
 * What became of one new run: written; not written because its Idempotency-Key names a run already there (created
 * before, or earlier in the same statement); or not written because the roles its permit was decided on changed.
 */
export type NewRunOutcome =
  { readonly kind: "created"; readonly appended: AppendRunEventsResult } | { readonly kind: "key_used" } | { readonly kind: "roles_changed" };

/**
 * The runs in one statement, so one round trip and one commit for many (`$1`: the runs as a JSON array, `$2`: how
 * long what their writer publishes itself is kept from the relays, in ms). Each run is written whole or not at all,
 * apart from the others: the runs row is inserted first (`ON CONFLICT DO NOTHING`: a key used before skips that
 * run alone), and its events, commands and permit record only with it. A run whose permit rests on remembered roles
 * is skipped when its member no longer holds them. A new run has nothing before it on the bus: its writer publishes
 * its copies (and its commands, when they are the writer's) itself.
 */
const CREATE_RUNS_SQL = `
WITH ${RUNS_BATCH},
allowed AS (
  SELECT * FROM batch
   WHERE jsonb_typeof(j->'permit_roles') IS DISTINCT FROM 'array'
      OR roles_still_held(j#>>'{permit,tenant_id}', j#>>'{permit,user_id}', j->'permit_roles')),
created AS (
  INSERT INTO runs (${RUN_COLUMNS}, events_subject, publish_held_until)
  SELECT ${RUN_COLUMNS}, events_subject,
         CASE WHEN (j->>'direct')::bool THEN ${heldFor("$2::float8")} END
    -- Keys taken in one order by every statement: two running at once with the same two keys never wait for
    -- each other in a cycle.
    FROM allowed ORDER BY tenant_id, created_by, idempotency_key, ord
  ON CONFLICT DO NOTHING
  RETURNING id),
ins AS (
  INSERT INTO events (event_id, stream_id, tenant_id, version, type, data, metadata)
  SELECT (e.j->>'event_id')::uuid, a.id, a.tenant_id, e.ord::int, e.j->>'type', e.j->'data', a.j->'metadata'
    FROM allowed a JOIN created USING (id)
   CROSS JOIN LATERAL jsonb_array_elements(a.j->'events') WITH ORDINALITY AS e(j, ord)
   ORDER BY a.ord, e.ord
  RETURNING event_id, stream_id, tenant_id, version, type, data, metadata, recorded_at),
commands AS (
  INSERT INTO outbox (run_id, subject, msg_id, payload, headers, retry_at, after_version)
  SELECT a.id, c.j->>'subject', c.j->>'msg_id', c.j->>'payload', c.j->'headers',
         CASE WHEN (a.j->>'direct_commands')::bool THEN ${heldFor("$2::float8")} END,
         -- after the run's events written with it
         jsonb_array_length(a.j->'events')
    FROM allowed a JOIN created USING (id)
   CROSS JOIN LATERAL jsonb_array_elements(a.j->'commands') WITH ORDINALITY AS c(j, ord)
   ORDER BY a.ord, c.ord
  ${COMMAND_RETURNING}),
permits AS (
  INSERT INTO policy_decisions (tenant_id, user_id, action, resource_type, resource_id, run_id, step_no, fingerprint,
                                elevation_session_id, permit, code, policy_ids, policy_version, latency_ms,
                                mcp_session_id, mcp_mode)
  SELECT d.tenant_id, d.user_id, d.action, d.resource_type, d.resource_id, d.run_id, d.step_no, d.fingerprint,
         d.elevation_session_id, d.permit, d.code, d.policy_ids, d.policy_version, d.latency_ms, d.mcp_session_id, d.mcp_mode
    FROM allowed a JOIN created USING (id)
   CROSS JOIN LATERAL jsonb_populate_record(NULL::policy_decisions, a.j->'permit') AS d
   WHERE jsonb_typeof(a.j->'permit') = 'object')
SELECT b.ord, -1 AS part,
       CASE WHEN c.id IS NOT NULL THEN 'created' WHEN a.id IS NULL THEN 'roles_changed' ELSE 'key_used' END AS outcome,
       NULL::uuid AS event_id, NULL::int AS version, NULL::timestamptz AS recorded_at, NULL::bigint AS outbox_id,
       NULL AS subject, NULL AS msg_id, NULL AS payload, NULL::jsonb AS headers
  FROM batch b LEFT JOIN allowed a USING (ord) LEFT JOIN created c ON c.id = b.id
UNION ALL
SELECT a.ord, 0, NULL, ins.event_id, ins.version, ins.recorded_at, NULL, NULL, NULL, NULL, NULL
  FROM ins JOIN allowed a ON a.id = ins.stream_id
UNION ALL
SELECT a.ord, 1, NULL, NULL, ins.version, NULL, NULL, ${busCopyColumns("ins", "a.events_subject")}
  FROM ins JOIN allowed a ON a.id = ins.stream_id WHERE (a.j->>'direct')::bool
UNION ALL
SELECT a.ord, 2, NULL, NULL, NULL, NULL, commands.id, commands.subject, commands.msg_id, commands.payload, commands.headers
  FROM commands JOIN allowed a ON a.id = commands.run_id WHERE commands.direct
ORDER BY ord, part, version, outbox_id`;
const createRunsStatement = preparedStatement("steward.create_runs", CREATE_RUNS_SQL);

/** A row of the statement's answer: a run's outcome (part -1), then what an append answers (`AnswerRow`). */
interface CreatedRow extends AnswerRow {
  ord: number;
  outcome: NewRunOutcome["kind"] | null;
}

/**
 * Writes new runs (each run's first events, its commands, its runs row and its permit's record) in one statement:
 * one round trip and one commit for the lot, each run written or skipped apart from the others (`NewRunOutcome`).
 * An event over the size limit throws before anything is written (EventTooLargeError); data PostgreSQL refuses
 * fails the whole statement, which writes nothing.
 */
export async function createRuns(pool: Pool, runs: readonly NewRunInput[]): Promise<NewRunOutcome[]> {
  const prepared = runs.map((input) => {
    assertEventsFit(input.runId, input.events);
    const state = foldRun(input.events, initialRunState);
    const ids = input.events.map(() => timeOrderedId());
    const metadata = input.traceparent ? { traceparent: input.traceparent } : {};
    const direct = Boolean(input.publishDirect);
    const json = {
      run: {
        ...runRowJson({ id: input.runId, tenantId: input.tenantId, idempotencyKey: input.idempotencyKey, requestHash: input.requestHash }, state),
        events_subject: busNames(input.namespace).runEvent(input.runId, ""),
      },
      metadata,
      events: eventsJson(input.events, ids),
      commands: (input.commands ?? []).map((c) => ({ subject: c.subject, msg_id: c.msgId, payload: JSON.stringify(c.payload), headers: c.headers })),
      direct,
      direct_commands: direct && Boolean(input.directCommands),
      permit: input.permitRecord ?? null,
      permit_roles: input.permitRoles ?? null,
    };
    return { input, state, ids, metadata, json };
  });
  const { rows } = await pool.query<CreatedRow>(createRunsStatement([JSON.stringify(prepared.map((p) => p.json)), DIRECT_GRACE_MS]));
  const byRun = answersByRun(rows, runs);
  return prepared.map((p, i): NewRunOutcome => {
    const [status, ...written] = byRun[i];
    if (status?.part !== -1 || !status.outcome) throw new Error(`the statement gave no outcome for run ${p.input.runId}`);
    if (status.outcome !== "created") return { kind: status.outcome };
    if (!written.some((r) => r.part === 0)) throw new Error(`run ${p.input.runId}: created without its events`);
    return {
      kind: "created",
      appended: { events: storedEvents(p.input, p.input.events, p.ids, p.metadata, written), state: p.state, direct: directRows(written) },
    };
  });
}

import { randomUUID } from "node:crypto";
import type { Pool, PoolClient } from "pg";
import { busNames, foldRun, type RunEvent, type RunState, type StoredRunEvent } from "@steward/contract";
import { ConcurrencyError, preparedStatement } from "@steward/platform";
import { appendFailure, insertEventsAtVersion } from "../event-store/append-at-version";
import { assertEventsFit } from "../event-store/event-size";
import type { OutboxMessage } from "../outbox/enqueue";
import type { OutboxRow } from "../outbox/outbox-row";
import { RUN_COLUMNS, RUN_UPSERT, runRowParams, runRowValues } from "./project-run";

export interface AppendRunEventsInput {
  readonly runId: string;
  readonly tenantId: string;
  /** The run as folded so far; its `version` is the expected stream version. */
  readonly state: RunState;
  readonly events: readonly RunEvent[];
  /** Commands to publish with the events, in the same transaction. */
  readonly commands?: readonly OutboxMessage[];
  readonly namespace: string;
  readonly traceparent?: string;
  readonly idempotencyKey?: string | null;
  readonly requestHash?: string | null;
  /**
   * The writer publishes the event copies itself right after the commit (`createDirectPublisher`): they are
   * kept from the relays for `DIRECT_GRACE_MS` and returned in `direct` — unless an earlier row of the run is
   * still unpublished and not one of `ownRows`: then they go by the relays, after it. Commands go by the relays
   * unless `directCommands`.
   */
  readonly publishDirect?: boolean;
  /**
   * With `publishDirect`, the commands are the writer's to publish too, after the copies (the gateway's: a
   * runner's NATS user may publish event copies only). A command published so carries the header
   * `Steward-Published-Through` (PUBLISHED_THROUGH_HEADER): every row of its run up to its own is on the bus.
   */
  readonly directCommands?: boolean;
  /** The run's outbox rows this writer is publishing itself and has not yet marked (`DirectPublisher.pendingOf`). */
  readonly ownRows?: readonly string[];
  /**
   * Every outbox row of the run up to this id is known to be on the bus, marked or not: the command this writer
   * was handed said so (`Steward-Published-Through`). Rows up to it do not hold the writer's own publishing.
   */
  readonly publishedThrough?: string | null;
  /**
   * A `policy_decisions` row (column names as keys) committed with the events, only when they are (the gateway's
   * permit to create the run: its record and the run in one commit). Needs INSERT on the decision log.
   */
  readonly permitRecord?: Readonly<Record<string, unknown>> | null;
  /**
   * The membership roles the permit was decided on from memory (`DecisionEntry.rememberedRoles`): nothing is
   * written (a ConcurrencyError) unless the permit's member holds exactly these roles when the statement runs.
   */
  readonly permitRoles?: readonly string[] | null;
}

export interface AppendRunEventsResult {
  readonly events: StoredRunEvent[];
  readonly state: RunState;
  /** The outbox rows the writer publishes itself (`publishDirect`), in row order; empty otherwise. */
  readonly direct: readonly OutboxRow[];
}

/**
 * The header of a command its writer published itself: the command's outbox id, below which (and including it)
 * every row of the run was on the bus before the command was (its writer sends it only once every earlier row it
 * sent of the run is acknowledged). Its receiver passes it on as `publishedThrough`.
 */
export const PUBLISHED_THROUGH_HEADER = "Steward-Published-Through";

/** How long a row its writer publishes itself is kept from the relays, in ms: their sweep takes it after. */
export const DIRECT_GRACE_MS = 2000;

/** A permit decided on remembered roles ($39) holds only while its member holds exactly them: else nothing is inserted. */
const PERMIT_ROLES_HELD = "roles_still_held($38::jsonb->>'tenant_id', $38::jsonb->>'user_id', $39::jsonb)";

/** The permit's record, inserted only with the events (a stream not at the expected version writes neither). */
const PERMIT_RECORD = `
permit AS (
  INSERT INTO policy_decisions (tenant_id, user_id, action, resource_type, resource_id, run_id, step_no, fingerprint,
                                elevation_session_id, permit, code, policy_ids, policy_version, latency_ms,
                                mcp_session_id, mcp_mode)
  SELECT d.tenant_id, d.user_id, d.action, d.resource_type, d.resource_id, d.run_id, d.step_no, d.fingerprint,
         d.elevation_session_id, d.permit, d.code, d.policy_ids, d.policy_version, d.latency_ms, d.mcp_session_id, d.mcp_mode
    FROM jsonb_populate_record(NULL::policy_decisions, $38::jsonb) AS d
   WHERE EXISTS (SELECT 1 FROM ins)),`;

/**
 * One statement, so one round trip: the events (inserted only when the stream is at the expected version;
 * a racing appender hits the unique (stream_id, version) constraint), their bus copies (subject
 * `…agent.events.<run>.<type>`, message id = event id, the stored event as payload, headers naming run, type
 * and seq) and the commands in the outbox, after the copies, each row naming the run, and the runs projection
 * from the fold — all or nothing.
 */
const appendRunEventsSql = (permit: boolean) => `
WITH ${insertEventsAtVersion("event_id, version, type, data, recorded_at", permit ? PERMIT_ROLES_HELD : undefined)},${permit ? PERMIT_RECORD : ""}
-- Published by the writer only when every earlier row of the run is on the bus or on its way there by this
-- writer: a row held for another writer (a dead runner's, or one whose publish failed) goes first, by a relay.
direct AS (
  SELECT $14::float8 AS grace_ms
   WHERE $14::float8 IS NOT NULL AND NOT EXISTS (
         SELECT FROM outbox h
          WHERE h.run_id = $1 AND h.published_at IS NULL AND h.set_aside_at IS NULL AND h.id <> ALL($15::bigint[])
            AND h.id > coalesce($37::bigint, 0))),
copies AS (
  INSERT INTO outbox (run_id, subject, msg_id, payload, headers, retry_at)
  SELECT $1, $8 || ins.type, ins.event_id::text,
         jsonb_build_object('type', ins.type, 'data', ins.data, 'metadata', $7::jsonb || jsonb_build_object(
           'event_id', ins.event_id, 'run_id', $1::uuid, 'tenant_id', $2::text, 'seq', ins.version,
           'recorded_at', to_char(ins.recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')))::text,
         $9::jsonb || jsonb_build_object('Steward-Run-Id', $1::text, 'Steward-Event-Type', ins.type, 'Steward-Seq', ins.version::text),
         clock_timestamp() + make_interval(secs => (SELECT grace_ms FROM direct) / 1000)
    FROM ins ORDER BY ins.version
  RETURNING id, subject, msg_id, payload, headers, retry_at IS NOT NULL AS direct),
commands AS (
  INSERT INTO outbox (run_id, subject, msg_id, payload, headers, retry_at)
  SELECT $1, c.subject, c.msg_id, c.payload, c.headers,
         CASE WHEN $36::bool THEN clock_timestamp() + make_interval(secs => (SELECT grace_ms FROM direct) / 1000) END
    FROM unnest($10::text[], $11::text[], $12::text[], $13::jsonb[]) WITH ORDINALITY AS c(subject, msg_id, payload, headers, ord)
   -- After every copy (reading them all makes them go first): a run's command never reaches the bus before
   -- the events written with it, so whoever drives the run next publishes after them.
   WHERE (SELECT count(*) FROM copies) > 0 ORDER BY c.ord
  -- Published by its writer, after the copies: the header tells the receiver that the run's rows up to it are out.
  RETURNING id, subject, msg_id, payload, headers || jsonb_build_object('${PUBLISHED_THROUGH_HEADER}', id::text) AS headers,
            retry_at IS NOT NULL AS direct),
projection AS (
  INSERT INTO runs (${RUN_COLUMNS}) SELECT ${runRowParams(16)} WHERE EXISTS (SELECT 1 FROM ins)
  ${RUN_UPSERT})
SELECT event_id, version, recorded_at, NULL::bigint AS outbox_id, NULL AS subject, NULL AS msg_id, NULL AS payload, NULL::jsonb AS headers FROM ins
UNION ALL
SELECT NULL, NULL, NULL, id, subject, msg_id, payload, headers FROM copies WHERE direct
UNION ALL
SELECT NULL, NULL, NULL, id, subject, msg_id, payload, headers FROM commands WHERE direct
ORDER BY outbox_id NULLS FIRST, version`;
const appendStatement = preparedStatement("steward.append_run_events", appendRunEventsSql(false));
const appendWithPermitStatement = preparedStatement("steward.append_run_events_permitted", appendRunEventsSql(true));

/**
 * The one write path of a run: append the events with optimistic concurrency on the state's version, put
 * their bus copies and any commands in the outbox, and update the runs projection — in one statement (in the
 * caller's transaction when given a client: adding a run to a thread). An event over the size limit writes
 * nothing (EventTooLargeError).
 */
export async function appendRunEvents(pool: Pool | PoolClient, input: AppendRunEventsInput): Promise<AppendRunEventsResult> {
  assertEventsFit(input.runId, input.events);
  const state = foldRun(input.events, input.state);
  const names = busNames(input.namespace);
  const ids = input.events.map(() => randomUUID());
  const metadata = input.traceparent ? { traceparent: input.traceparent } : {};
  const commands = input.commands ?? [];
  let rows: AppendedRow[];
  let direct: OutboxRow[];
  try {
    const statement = input.permitRecord ? appendWithPermitStatement : appendStatement;
    const result = await pool.query<AppendedRow>(statement([
      input.runId,
      input.tenantId,
      input.state.version,
      ids,
      input.events.map((e) => e.type),
      input.events.map((e) => JSON.stringify(e.data)),
      JSON.stringify(metadata),
      names.runEvent(input.runId, ""),
      JSON.stringify(input.traceparent ? { traceparent: input.traceparent } : {}),
      commands.map((c) => c.subject),
      commands.map((c) => c.msgId),
      commands.map((c) => JSON.stringify(c.payload)),
      commands.map((c) => JSON.stringify(c.headers)),
      input.publishDirect ? DIRECT_GRACE_MS : null,
      input.ownRows ?? [],
      ...runRowValues({ id: input.runId, tenantId: input.tenantId, idempotencyKey: input.idempotencyKey, requestHash: input.requestHash }, state),
      Boolean(input.publishDirect && input.directCommands),
      input.publishedThrough ?? null,
      ...(input.permitRecord ? [JSON.stringify(input.permitRecord), input.permitRoles ? JSON.stringify(input.permitRoles) : null] : []),
    ]));
    rows = result.rows.filter((r) => r.outbox_id === null);
    direct = result.rows.filter((r) => r.outbox_id !== null).map((r) => ({ id: r.outbox_id!, subject: r.subject!, msg_id: r.msg_id!, payload: r.payload!, headers: r.headers! }));
  } catch (err) {
    throw appendFailure(err, input.runId, input.state.version);
  }
  if (rows.length !== input.events.length) throw new ConcurrencyError(input.runId, input.state.version);
  const events = input.events.map((event, i) => ({
    ...event,
    metadata: { event_id: ids[i], run_id: input.runId, tenant_id: input.tenantId, seq: rows[i].version, recorded_at: rows[i].recorded_at, ...metadata },
  })) as StoredRunEvent[];
  return { events, state, direct };
}

/** A row of the append's answer: a stored event, or an outbox row its writer publishes itself. */
interface AppendedRow {
  event_id: string;
  version: number;
  recorded_at: string;
  outbox_id: string | null;
  subject: string | null;
  msg_id: string | null;
  payload: string | null;
  headers: Record<string, string> | null;
}

import type { Pool, PoolClient } from "pg";
import { busNames, foldRun, type RunEvent, type RunState, type StoredRunEvent } from "@steward/contract";
import { ConcurrencyError, preparedStatement, timeOrderedId } from "@steward/platform";
import { appendFailure, insertEventsAtVersion } from "../event-store/append-at-version";
import { busCopyColumns } from "../event-store/bus-copy";
import { assertEventsFit } from "../event-store/event-size";
import type { OutboxMessage } from "../outbox/enqueue";
import type { OwnPending } from "../outbox/direct-publisher";
import type { OutboxRow } from "../outbox/outbox-row";
import { heldFor, mayPublishDirectly } from "./direct-check";
import { COMMAND_RETURNING, PUBLISHED_THROUGH_HEADER, directRows, storedEvents, type AnswerRow } from "./append-answer";
import { RUN_APPEND_UPSERT, RUN_COLUMNS, runRowParams, runRowValues } from "./project-run";

export { PUBLISHED_THROUGH_HEADER };

export interface AppendRunEventsInput {
  readonly runId: string;
  readonly tenantId: string;
  /** The run as folded so far; its `version` is the expected stream version. */
  readonly state: RunState;
  readonly events: readonly RunEvent[];
  /**
   * The run folded through `events`, when the caller has it (its decider folded them): written as the projection
   * instead of folding them again. It must be `foldRun(events, state)`.
   */
  readonly folded?: RunState;
  /** Commands to publish with the events, in the same transaction. */
  readonly commands?: readonly OutboxMessage[];
  readonly namespace: string;
  readonly traceparent?: string;
  readonly idempotencyKey?: string | null;
  readonly requestHash?: string | null;
  /**
   * The writer publishes the event copies itself right after the commit (`createDirectPublisher`): they are
   * kept from the relays for `DIRECT_GRACE_MS` and returned in `direct` — unless an earlier event of the run is
   * not known to be on the bus and not one of `own`, or an earlier command is held for another writer: then they
   * go by the relays, after it. Commands go by the relays unless `directCommands`.
   */
  readonly publishDirect?: boolean;
  /**
   * With `publishDirect`, the commands are the writer's to publish too, after the copies (the gateway's: a
   * runner's NATS user may publish event copies only). A command published so carries the header
   * `Steward-Published-Through` (PUBLISHED_THROUGH_HEADER): every event of its run written before it is on the bus.
   */
  readonly directCommands?: boolean;
  /** What of the run this writer is publishing itself and has not yet marked (`DirectPublisher.pendingOf`). */
  readonly own?: OwnPending;
  /**
   * The command this writer was handed (its outbox id) said that every event of the run written before it was on
   * the bus, marked or not (`Steward-Published-Through`): they do not hold the writer's own publishing.
   */
  readonly publishedThrough?: string | null;
  /**
   * Every event of the run up to this version is acknowledged on the bus, and not yet marked (`DirectPublisher.carry`):
   * the append marks the run published through it, as the publisher's own mark would (never lowering the mark).
   */
  readonly markOnBus?: number | null;
}

export interface AppendRunEventsResult {
  readonly events: StoredRunEvent[];
  readonly state: RunState;
  /** What the writer publishes itself (`publishDirect`): the copies in version order, then the commands; empty otherwise. */
  readonly direct: readonly OutboxRow[];
}

/** How long what its writer publishes itself is kept from the relays, in ms: their sweep takes it after. */
export const DIRECT_GRACE_MS = 2000;

/**
 * One statement, so one round trip: the events (inserted only when the stream is at the expected version;
 * a racing appender hits the unique (stream_id, version) constraint), the commands in the outbox, each after
 * the version it was written with and naming the run, and the runs projection from the fold — all or nothing.
 * The events' bus copies are not written again: the run's row says how far they are on the bus
 * (`published_version`), and whoever publishes them builds them from the events (`busCopyColumns`).
 */
const APPEND_RUN_EVENTS_SQL = `
WITH ${insertEventsAtVersion("event_id, stream_id, tenant_id, version, type, data, metadata, recorded_at")},
-- Published by the writer itself only when the run's earlier rows allow it (\`mayPublishDirectly\`).
direct AS (
  SELECT $14::float8 AS grace_ms
   WHERE $14::float8 IS NOT NULL
     AND ${mayPublishDirectly({ runId: "$1", floor: "$9::int", publishedThrough: "$37::bigint", ownCommands: "$15::bigint[]" })}),
commands AS (
  INSERT INTO outbox (run_id, subject, msg_id, payload, headers, retry_at, after_version)
  SELECT $1, c.subject, c.msg_id, c.payload, c.headers,
         CASE WHEN $36::bool THEN ${heldFor("(SELECT grace_ms FROM direct)")} END,
         -- A run's command never reaches the bus before the events written with it, so whoever drives the run
         -- next publishes after them.
         $3::int + cardinality($4::uuid[])
    FROM unnest($10::text[], $11::text[], $12::text[], $13::jsonb[]) WITH ORDINALITY AS c(subject, msg_id, payload, headers, ord)
   WHERE EXISTS (SELECT FROM ins) ORDER BY c.ord
  -- Published by its writer, after the copies: the header tells the receiver that the run's events up to it are out.
  ${COMMAND_RETURNING}),
projection AS (
  INSERT INTO runs (${RUN_COLUMNS}, events_subject, publish_held_until, published_version)
  SELECT ${runRowParams(16)}, $8, ${heldFor("(SELECT grace_ms FROM direct)")}, coalesce($38::int, 0)
   WHERE EXISTS (SELECT 1 FROM ins)
  ${RUN_APPEND_UPSERT})
SELECT 0 AS part, event_id, version, recorded_at, NULL::bigint AS outbox_id, NULL AS subject, NULL AS msg_id, NULL AS payload, NULL::jsonb AS headers FROM ins
UNION ALL
SELECT 1, NULL, ins.version, NULL, NULL, ${busCopyColumns("ins", "$8")} FROM ins WHERE EXISTS (SELECT FROM direct)
UNION ALL
SELECT 2, NULL, NULL, NULL, id, subject, msg_id, payload, headers FROM commands WHERE direct
ORDER BY part, version, outbox_id`;
const appendStatement = preparedStatement("steward.append_run_events", APPEND_RUN_EVENTS_SQL);

/**
 * The write path of a run once it exists (a new run outside a thread: `createRuns`): append the events with optimistic concurrency on the state's version, put
 * their bus copies and any commands in the outbox, and update the runs projection — in one statement (in the
 * caller's transaction when given a client: adding a run to a thread). An event over the size limit writes
 * nothing (EventTooLargeError).
 */
export async function appendRunEvents(pool: Pool | PoolClient, input: AppendRunEventsInput): Promise<AppendRunEventsResult> {
  assertEventsFit(input.runId, input.events);
  const state = input.folded ?? foldRun(input.events, input.state);
  const names = busNames(input.namespace);
  const ids = input.events.map(() => timeOrderedId());
  const metadata = input.traceparent ? { traceparent: input.traceparent } : {};
  const commands = input.commands ?? [];
  let rows: AnswerRow[];
  try {
    const result = await pool.query<AnswerRow>(
      appendStatement([
        input.runId,
        input.tenantId,
        input.state.version,
        ids,
        input.events.map((e) => e.type),
        input.events.map((e) => JSON.stringify(e.data)),
        JSON.stringify(metadata),
        names.runEvent(input.runId, ""),
        ownFloor(input),
        commands.map((c) => c.subject),
        commands.map((c) => c.msgId),
        commands.map((c) => JSON.stringify(c.payload)),
        commands.map((c) => JSON.stringify(c.headers)),
        input.publishDirect ? DIRECT_GRACE_MS : null,
        input.own?.commandIds ?? [],
        ...runRowValues({ id: input.runId, tenantId: input.tenantId, idempotencyKey: input.idempotencyKey, requestHash: input.requestHash }, state),
        Boolean(input.publishDirect && input.directCommands),
        input.publishedThrough ?? null,
        input.markOnBus ?? null,
      ]),
    );
    rows = result.rows;
  } catch (err) {
    throw appendFailure(err, input.runId, input.state.version);
  }
  if (rows.filter((r) => r.part === 0).length !== input.events.length) throw new ConcurrencyError(input.runId, input.state.version);
  return { events: storedEvents(input, input.events, ids, metadata, rows), state, direct: directRows(rows) };
}

/**
 * Every event of the run up to this version must be on the bus for the writer to publish the new ones itself:
 * those below the first it is still publishing when every later one up to the append is its own too, or else
 * all before the append (another writer's event among them is not the writer's to vouch for).
 */
export function ownFloor(input: Pick<AppendRunEventsInput, "own" | "state">): number {
  const own = input.own;
  if (!own || own.fromVersion === null || own.throughVersion !== input.state.version) return input.state.version;
  return own.fromVersion - 1;
}

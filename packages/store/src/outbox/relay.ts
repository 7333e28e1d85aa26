import pg from "pg";
import { jetstream, type JetStreamClient } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { isQueryTimeout, preparedStatement, releaseClient, type Logger } from "@steward/platform";
import { busCopyColumns } from "../event-store/bus-copy";
import { SETTLED } from "./bus-settled";
import { publishTraced } from "./publish-span";
import { busAway, classifyPublishError } from "./publish-failure";
import { publishLanes } from "./publish-lanes";
import { runLanes, type ClaimedRow } from "./run-order";
import { settleBatch, type RetriedRow } from "./settle-batch";
import { settleCopies, type CopiesSettlement } from "./settle-copies";

export interface OutboxRelayOptions {
  /** Rows claimed per transaction. Default 256. */
  batchSize?: number;
  /** Safety-net sweep interval in ms, for a notification lost while disconnected. Default 5000. */
  sweepMs?: number;
  /** Published rows older than this are deleted by the sweep, in ms. Default 1 day. */
  retainPublishedMs?: number;
  /** Attempts after which a message NATS refuses is set aside (kept, with its reason, never sent). Default 5. */
  maxAttempts?: number;
  /** Pause before a refused message is tried again, in ms; doubles per attempt up to 30 s. Default 1000. */
  retryBaseMs?: number;
  /**
   * Only rows whose subject starts with one of these are this relay's to publish (a runner's NATS user may
   * publish event copies, never commands: those wait for the gateway's relay). Default: every row.
   */
  subjectPrefixes?: readonly string[];
}

export interface OutboxRelay {
  start(): Promise<void>;
  /** Publishes everything pending now; resolves with the number of rows published. */
  drain(): Promise<number>;
  stop(): Promise<void>;
}

const LOCK = "hashtextextended('steward.outbox.relay', 0)";
const BEGIN = "BEGIN; SET LOCAL idle_in_transaction_session_timeout = '15s'; ";
const BEGIN_AND_WAIT = `${BEGIN}SELECT pg_advisory_xact_lock(${LOCK})`;
const BEGIN_OR_SKIP = `${BEGIN}SELECT pg_try_advisory_xact_lock(${LOCK}) AS got`;

/** Rows to try again: due again later (counted when refused), or set aside for good at their last attempt. */
const RECORD_RETRIED = `
UPDATE outbox o
   SET attempts = r.attempts,
       last_error = r.reason,
       retry_at = CASE WHEN r.set_aside THEN NULL ELSE clock_timestamp() + make_interval(secs => r.retry_ms / 1000.0) END,
       set_aside_at = CASE WHEN r.set_aside THEN clock_timestamp() END
  FROM unnest($1::bigint[], $2::int[], $3::text[], $4::bool[], $5::int[]) AS r(id, attempts, reason, set_aside, retry_ms)
 WHERE o.id = r.id`;

/**
 * The outbox rows a relay may publish now, locked: due, not set aside, for its subjects, and not behind a row of
 * their run that is not due (its writer still holds it, or it waits to be tried again); a command only once its
 * run's events written before it are on the bus or due now (the batch sends them first). Once per wake-up of
 * every relay: prepared.
 */
const claimPending = preparedStatement(
  "steward.outbox_claim",
  `SELECT o.id, o.run_id, o.subject, o.msg_id, o.payload, o.headers, o.attempts, o.after_version, r.published_version
     FROM outbox o LEFT JOIN runs r ON r.id = o.run_id
    WHERE o.published_at IS NULL AND o.set_aside_at IS NULL AND (o.retry_at IS NULL OR o.retry_at <= clock_timestamp())
      AND ($2::text[] IS NULL OR EXISTS (SELECT FROM unnest($2::text[]) AS p(prefix) WHERE starts_with(o.subject, p.prefix)))
      AND (o.run_id IS NULL OR NOT EXISTS (
           SELECT FROM outbox h
            WHERE h.run_id = o.run_id AND h.id < o.id AND h.published_at IS NULL AND h.set_aside_at IS NULL
              AND h.retry_at > clock_timestamp()))
      AND (o.after_version IS NULL OR r.id IS NULL OR r.published_version >= o.after_version OR (
           (r.publish_held_until IS NULL OR r.publish_held_until <= clock_timestamp())
           AND (r.publish_retry_at IS NULL OR r.publish_retry_at <= clock_timestamp())))
    ORDER BY o.id LIMIT $1 FOR UPDATE OF o`,
);

/**
 * The copies a relay may publish now, built from the events table: of the runs whose events above
 * `published_version` are due (no writer holds them, no retry pending) and for its subjects, those events in
 * version order, up to the first command of the run that is not due. The runs' rows are not locked (their writers append meanwhile); the relays' lock keeps relays
 * from publishing the same run at once. Prepared.
 */
const claimCopies = preparedStatement(
  "steward.outbox_claim_copies",
  `SELECT r.id AS run_id, e.version, CASE WHEN e.version = r.published_version + 1 THEN r.publish_attempts ELSE 0 END AS attempts,
          e.event_id::text AS id, ${busCopyColumns("e", "r.events_subject")}
     FROM (SELECT id, published_version, events_subject, publish_attempts FROM runs
            WHERE NOT bus_settled AND version > published_version AND events_subject IS NOT NULL
              AND (publish_held_until IS NULL OR publish_held_until <= clock_timestamp())
              AND (publish_retry_at IS NULL OR publish_retry_at <= clock_timestamp())
              AND ($2::text[] IS NULL OR EXISTS (SELECT FROM unnest($2::text[]) AS p(prefix) WHERE starts_with(events_subject, p.prefix)))
            ORDER BY id LIMIT $1) r
    -- A command of the run that is not due (held by its writer, or waiting for its next try) holds back the
    -- events written after it.
    CROSS JOIN LATERAL (
          SELECT min(h.after_version) AS cap FROM outbox h
           WHERE h.run_id = r.id AND h.published_at IS NULL AND h.set_aside_at IS NULL AND h.retry_at > clock_timestamp()) c
    CROSS JOIN LATERAL (
          SELECT * FROM events e
           WHERE e.stream_id = r.id AND e.version > r.published_version AND (c.cap IS NULL OR e.version <= c.cap)
           ORDER BY e.version LIMIT $1) e
    ORDER BY r.id, e.version LIMIT $1`,
);

/**
 * What the copies' tries made of their runs: how far each run is on the bus, its retry, and the copies set aside
 * (kept in the outbox with their reason). The runs' rows are locked in id order, as a writer's marks lock them.
 */
const SETTLE_COPIES = `
WITH s AS (SELECT * FROM unnest($1::uuid[], $2::int[], $3::int[], $4::float8[]) AS s(id, version, attempts, retry_ms)),
locked AS (SELECT r.id FROM runs r JOIN s ON s.id = r.id ORDER BY r.id FOR NO KEY UPDATE OF r),
aside AS (
  INSERT INTO outbox (run_id, subject, msg_id, payload, headers, attempts, last_error, set_aside_at)
  SELECT a.run_id, a.subject, a.msg_id, a.payload, a.headers, a.attempts, a.reason, clock_timestamp()
    FROM unnest($5::uuid[], $6::text[], $7::text[], $8::text[], $9::jsonb[], $10::int[], $11::text[])
         AS a(run_id, subject, msg_id, payload, headers, attempts, reason)
  ON CONFLICT (msg_id) DO NOTHING)
UPDATE runs r
   SET published_version = greatest(r.published_version, s.version), bus_settled = ${SETTLED("s.version")}, publish_attempts = s.attempts,
       publish_retry_at = CASE WHEN s.retry_ms IS NULL THEN NULL ELSE clock_timestamp() + make_interval(secs => s.retry_ms / 1000.0) END
  FROM s WHERE r.id = s.id AND r.id IN (SELECT id FROM locked)`;

/**
 * The header a copy a relay publishes carries (a writer's own copies have none): which path put an event on the
 * bus, when a writer's publish was missed (it died, the bus refused it) or never tried (another writer's append).
 */
export const RELAYED_HEADER = "Steward-Relayed";

const relayed = (row: ClaimedRow): ClaimedRow => ({ ...row, headers: { ...row.headers, [RELAYED_HEADER]: "true" } });

function settleCopiesParams(s: CopiesSettlement): unknown[] {
  const a = s.setAside;
  return [
    s.runs.map((r) => r.runId),
    s.runs.map((r) => r.publishedVersion),
    s.runs.map((r) => r.attempts),
    s.runs.map((r) => r.retryInMs),
    a.map((x) => x.row.run_id),
    a.map((x) => x.row.subject),
    a.map((x) => x.row.msg_id),
    a.map((x) => x.row.payload),
    a.map((x) => JSON.stringify(x.row.headers)),
    a.map((x) => x.attempts),
    a.map((x) => x.reason),
  ];
}

/**
 * Publishes to JetStream the runs' events not yet on the bus (copies built from the events table) and the outbox
 * rows (commands). Woken by LISTEN/NOTIFY; several relays (the gateway's, each runner's) take turns under one
 * advisory lock. A run's messages reach the stream in their order (`runLanes`): within a batch each is
 * sent only once the run's row before it is acknowledged (`publishLanes`), and a row that failed holds the
 * run's later rows back until it is on the stream or set aside. Each publish carries `Nats-Msg-Id`, so that a
 * row published again after a crash (published, then died before commit) is dropped by JetStream's duplicate
 * window. A message NATS refuses (too large) is retried a few times with a backoff and then set aside with its
 * reason; other runs' rows go on meanwhile. A row no stream answers for waits a pause, uncounted, and is tried
 * again for as long as it takes. The bus being away ends the batch: everything waits, in order, uncounted.
 */
export function createOutboxRelay(
  deps: { pool: pg.Pool; nc: NatsConnection; connectionString: string; logger: Logger },
  options: OutboxRelayOptions = {},
): OutboxRelay {
  const batchSize = options.batchSize ?? 256;
  // A relay for some subjects only (a runner's) leaves its turn to the one publishing now; the relay for every
  // subject (the gateway's) waits for its turn, so a row only it may publish never waits for the sweep.
  const yieldsTurn = options.subjectPrefixes !== undefined;
  const sweepMs = options.sweepMs ?? 5000;
  const retainMs = options.retainPublishedMs ?? 24 * 3600 * 1000;
  const retry = { maxAttempts: options.maxAttempts ?? 5, retryBaseMs: options.retryBaseMs ?? 1000, retryMaxMs: 30_000 };
  const js: JetStreamClient = jetstream(deps.nc);
  let listener: pg.Client | null = null;
  let sweepTimer: NodeJS.Timeout | null = null;
  let running: Promise<number> | null = null;
  let again = false;
  let stopped = false;

  function reportRetried(rows: readonly RetriedRow[], copies: CopiesSettlement["retried"]): void {
    const unanswered = [...rows, ...copies].filter((row) => row.kind === "unanswered");
    if (unanswered.length > 0) {
      // One line per batch: while a stream elects a leader, every row of the batch may be unanswered.
      const fields = { rows: unanswered.length, subject: unanswered[0].subject };
      deps.logger.warn(fields, "no JetStream stream answered for outbox messages; they and their runs' later messages wait");
    }
    const refused = [
      ...rows.map((row) => ({ row, where: { outbox_id: row.id } })),
      ...copies.map((row) => ({ row, where: { run_id: row.runId, seq: row.id } })),
    ].filter(({ row }) => row.kind === "refused");
    for (const { row, where } of refused) {
      const fields = { ...where, subject: row.subject, attempts: row.attempts, reason: row.reason };
      if (row.setAside) deps.logger.error(fields, "outbox message set aside: NATS refused it; its run's later messages go on");
      else deps.logger.warn(fields, "NATS refused an outbox message; it will be tried again, its run's later messages after it");
    }
  }

  /** One batch: `full` when a claim came back full (more may be pending), `published` messages went onto the stream. */
  async function publishBatch(): Promise<{ full: boolean; published: number }> {
    const client = await deps.pool.connect();
    let failure: unknown;
    let outage: { error: unknown } | null = null;
    let retried: RetriedRow[] = [];
    let copiesRetried: CopiesSettlement["retried"] = [];
    let full = false;
    let published = 0;
    try {
      // One round trip. A relay that lost its network while holding the lock would otherwise hold it, idle in
      // its transaction, until the server noticed the dead peer (hours, by TCP's defaults): every relay would
      // wait behind it. The server ends such a transaction after 15 s; its rows are published again.
      // One relay publishes at a time: two relays publishing disjoint batches at once could put a run's later
      // event on the stream before its earlier one.
      const turn = await client.query(yieldsTurn ? BEGIN_OR_SKIP : BEGIN_AND_WAIT);
      if (yieldsTurn && !(turn as unknown as Array<{ rows: Array<{ got: boolean }> }>)[2].rows[0].got) {
        // Another relay publishes now, and it was woken by the same notification: it takes these rows too.
        await client.query("COMMIT");
        return { full: false, published: 0 };
      }
      // What is not due (held by its writer within its grace, or waiting for its next attempt) holds back the
      // later messages of its run; other runs' go.
      const prefixes = options.subjectPrefixes ?? null;
      const copies = (await client.query<ClaimedRow>(claimCopies([batchSize, prefixes]))).rows.map(relayed);
      const rows = (await client.query<ClaimedRow>(claimPending([batchSize, prefixes]))).rows;
      full = copies.length === batchSize || rows.length === batchSize;
      const lanes = runLanes(copies, rows);
      if (lanes.length > 0) {
        const tried = await publishLanes(lanes, (row) => publishTraced(js, row), classifyPublishError);
        const settled = settleBatch(
          tried.filter((t) => t.row.version === undefined).map(({ row, failure }) => ({ id: Number(row.id), subject: row.subject, attempts: row.attempts, failure })),
          retry,
        );
        const copiesSettled = settleCopies(tried.filter((t) => t.row.version !== undefined), retry);
        if (settled.published.length > 0) {
          await client.query("UPDATE outbox SET published_at = clock_timestamp() WHERE id = ANY($1::bigint[])", [settled.published]);
        }
        retried = settled.retried;
        if (retried.length > 0) {
          const r = retried;
          await client.query(RECORD_RETRIED, [r.map((x) => x.id), r.map((x) => x.attempts), r.map((x) => x.reason), r.map((x) => x.setAside), r.map((x) => x.retryInMs)]);
        }
        if (copiesSettled.runs.length > 0) await client.query(SETTLE_COPIES, settleCopiesParams(copiesSettled));
        copiesRetried = copiesSettled.retried;
        published = settled.published.length + tried.filter((t) => t.row.version !== undefined && !t.failure).length;
        if (settled.outage || copiesSettled.outage) outage = { error: tried.find((t) => busAway(t.failure))?.error };
      }
      await client.query("COMMIT");
    } catch (err) {
      failure = err;
      if (!isQueryTimeout(err)) await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    } finally {
      releaseClient(client, failure);
    }
    reportRetried(retried, copiesRetried);
    // What went before the outage is committed; the rest waits, in order, for the bus to come back.
    if (outage) throw outage.error;
    return { full, published };
  }

  async function drainAll(): Promise<number> {
    let total = 0;
    for (;;) {
      const { full, published } = await publishBatch();
      total += published;
      // A full claim that published nothing (its commands wait for held events) is left for the next wake-up.
      if (!full || published === 0) return total;
    }
  }

  /** Coalesces wake-ups: at most one drain runs, and one more follows if woken meanwhile. */
  function drain(): Promise<number> {
    if (stopped) return Promise.resolve(0);
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      let total = 0;
      try {
        do {
          again = false;
          total += await drainAll();
        } while (again && !stopped);
      } finally {
        running = null;
      }
      return total;
    })();
    return running;
  }

  function wake(): void {
    drain().catch((err) => deps.logger.warn({ err }, "outbox relay could not publish; will retry"));
  }

  async function sweep(): Promise<void> {
    wake();
    await deps.pool
      .query("DELETE FROM outbox WHERE published_at < clock_timestamp() - make_interval(secs => $1)", [retainMs / 1000])
      .catch((err) => deps.logger.warn({ err }, "outbox cleanup failed"));
  }

  /**
   * LISTEN on a connection of its own, re-established with a capped backoff whenever it is lost (a server
   * restart, a cut network), for as long as the relay runs; the sweep covers the gap meanwhile.
   */
  async function listen(attempt = 0): Promise<void> {
    if (stopped) return;
    const client = new pg.Client({ connectionString: deps.connectionString, connectionTimeoutMillis: 5000, keepAlive: true });
    let lost = false;
    const relisten = (err?: Error) => {
      if (lost) return;
      lost = true;
      if (listener === client) listener = null;
      client.end().catch(() => undefined);
      if (stopped) return;
      if (attempt === 0) deps.logger.warn({ error_class: err?.name, code: (err as { code?: string })?.code }, "outbox listener lost PostgreSQL; reconnecting");
      const delay = Math.min(5000, 250 * 2 ** Math.min(attempt, 5));
      setTimeout(() => void listen(attempt + 1), delay).unref();
    };
    client.on("notification", wake);
    client.on("error", relisten);
    client.on("end", () => relisten());
    try {
      await client.connect();
      await client.query("LISTEN steward_outbox");
    } catch (err) {
      relisten(err as Error);
      return;
    }
    if (stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    if (attempt > 0) deps.logger.info("outbox listener is back");
    attempt = 0;
    listener = client;
    wake(); // anything written while nobody listened
  }

  /** NATS came back: whatever could not be published meanwhile goes now, not at the next sweep. */
  function wakeOnReconnect(): void {
    void (async () => {
      for await (const s of deps.nc.status()) {
        if (stopped) return;
        if (s.type === "reconnect") wake();
      }
    })().catch(() => undefined);
  }

  return {
    async start() {
      await listen();
      wakeOnReconnect();
      sweepTimer = setInterval(() => void sweep(), sweepMs);
      sweepTimer.unref();
    },
    drain,
    async stop() {
      if (sweepTimer) clearInterval(sweepTimer);
      // Flush what is pending so that nothing waits for another relay's sweep; a failure leaves it for them.
      await running?.catch(() => undefined);
      await drain().catch(() => undefined);
      stopped = true;
      const l = listener;
      listener = null;
      await l?.end().catch(() => undefined);
    },
  };
}

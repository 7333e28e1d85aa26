import pg from "pg";
import type { NatsConnection } from "@nats-io/transport-node";
import { isQueryTimeout, releaseClient, streamPublisherOf, watchNatsLink, type Logger, type NatsLink } from "@steward/platform";
import { publishTraced } from "./publish-span";
import { busAway, classifyPublishError } from "./publish-failure";
import { publishLanes } from "./publish-lanes";
import { runLanes, type ClaimedRow } from "./run-order";
import { settleBatch, type RetriedRow } from "./settle-batch";
import { settleCopies, type CopiesSettlement } from "./settle-copies";
import { wakeAgain } from "./wake-again";
import { RECORD_RETRIED, SETTLE_COPIES, claimCopies, claimPending, relayed, settleCopiesParams } from "./relay-statements";
export { RELAYED_HEADER } from "./relay-statements";

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

/** A relay whose NATS connection is down takes no turn: it would hold it while its publishes wait to time out. */
export class BusAwayError extends Error {
  constructor() {
    super("NATS is not connected");
    this.name = "BusAwayError";
  }
}

/** A row's retry_at is PostgreSQL's clock; the relay wakes this much after it, so that the row is due by then. */
const DUE_MARGIN_MS = 50;
const LOCK = "hashtextextended('steward.outbox.relay', 0)";
const BEGIN = "BEGIN; SET LOCAL idle_in_transaction_session_timeout = '15s'; ";
const BEGIN_AND_WAIT = `${BEGIN}SELECT pg_advisory_xact_lock(${LOCK})`;
const BEGIN_OR_SKIP = `${BEGIN}SELECT pg_try_advisory_xact_lock(${LOCK}) AS got`;

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
  /** `link`: the service's own (watchNatsLink); without one, the relay watches the connection itself once started. */
  deps: { pool: pg.Pool; nc: NatsConnection; connectionString: string; logger: Logger; link?: NatsLink },
  options: OutboxRelayOptions = {},
): OutboxRelay {
  const batchSize = options.batchSize ?? 256;
  // A relay for some subjects only (a runner's) leaves its turn to the one publishing now; the relay for every
  // subject (the gateway's) waits for its turn, so a row only it may publish never waits for the sweep.
  const yieldsTurn = options.subjectPrefixes !== undefined;
  const sweepMs = options.sweepMs ?? 5000;
  const retainMs = options.retainPublishedMs ?? 24 * 3600 * 1000;
  const retry = { maxAttempts: options.maxAttempts ?? 5, retryBaseMs: options.retryBaseMs ?? 1000, retryMaxMs: 30_000 };
  const bus = streamPublisherOf(deps.nc);
  let listener: pg.Client | null = null;
  let sweepTimer: NodeJS.Timeout | null = null;
  let running: Promise<number> | null = null;
  let again = false;
  let stopped = false;
  /** Only a started relay wakes itself (a relay drained by hand, in a test, does not). */
  const retrying = wakeAgain(() => wake(), { maxMs: sweepMs });
  let started = false;
  /** The connection's state and its comebacks: the service's from the first, or the relay's own once started. */
  let link: NatsLink | null = deps.link ?? null;
  const linkDown = () => link !== null && !link.connected();

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
    // Without its connection a relay would hold the turn while its publishes wait to time out, and the relays that
    // can publish would wait behind it (a runner's leaves the turn to the one publishing). NATS back wakes it.
    if (linkDown()) throw new BusAwayError();
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
        // Lost while it waited for its turn or claimed: the claim is undone and the rows wait, in order, for NATS.
        if (linkDown()) throw new BusAwayError();
        const tried = await publishLanes(lanes, (row) => publishTraced(bus, row), classifyPublishError);
        const settled = settleBatch(
          tried
            .filter((t) => t.row.version === undefined)
            .map(({ row, failure }) => ({ id: Number(row.id), subject: row.subject, attempts: row.attempts, failure })),
          retry,
        );
        const copiesSettled = settleCopies(
          tried.filter((t) => t.row.version !== undefined),
          retry,
        );
        if (settled.published.length > 0) {
          await client.query("UPDATE outbox SET published_at = clock_timestamp() WHERE id = ANY($1::bigint[])", [settled.published]);
        }
        retried = settled.retried;
        if (retried.length > 0) {
          const r = retried;
          await client.query(RECORD_RETRIED, [
            r.map((x) => x.id),
            r.map((x) => x.attempts),
            r.map((x) => x.reason),
            r.map((x) => x.setAside),
            r.map((x) => x.retryInMs),
          ]);
        }
        if (copiesSettled.runs.length > 0) await client.query(SETTLE_COPIES, settleCopiesParams(copiesSettled));
        copiesRetried = copiesSettled.retried;
        // Rows due again soon (no stream answered for them, or a refusal's backoff) are tried when due, not at the
        // sweep: a stream electing a leader after a restart holds its runs' messages back for a moment only.
        const dueInMs = [...retried, ...copiesRetried].filter((r) => !r.setAside).map((r) => r.retryInMs);
        if (started && dueInMs.length > 0) retrying.after(Math.min(...dueInMs) + DUE_MARGIN_MS);
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
    drain().then(
      () => retrying.succeeded(),
      (err) => {
        if (stopped) return;
        // Tried again after a pause that grows while it keeps failing, up to the sweep's; said once per streak.
        const streak = retrying.failed();
        if (streak === 1) deps.logger.warn({ err }, "outbox relay could not publish; will retry");
        else deps.logger.debug({ error_class: (err as Error)?.name, streak }, "outbox relay could not publish again");
      },
    );
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

  return {
    async start() {
      started = true;
      // NATS lost: the relay takes no turn (publishBatch). NATS back: whatever waited goes now, not at the next sweep.
      // Watched before the first wake-up (listen's), so that no drain of a started relay goes without it.
      link ??= watchNatsLink(deps.nc, deps.logger);
      link.onReconnect(() => {
        if (!stopped) wake();
      });
      await listen();
      sweepTimer = setInterval(() => void sweep(), sweepMs);
      sweepTimer.unref();
    },
    drain,
    async stop() {
      if (sweepTimer) clearInterval(sweepTimer);
      retrying.stop();
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

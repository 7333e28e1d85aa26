import pg from "pg";
import { jetstream, type JetStreamClient } from "@nats-io/jetstream";
import { headers as natsHeaders, type NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "@steward/platform";

export interface OutboxRelayOptions {
  /** Rows claimed per transaction. Default 256. */
  batchSize?: number;
  /** Safety-net sweep interval in ms, for a notification lost while disconnected. Default 5000. */
  sweepMs?: number;
  /** Published rows older than this are deleted by the sweep, in ms. Default 1 day. */
  retainPublishedMs?: number;
}

export interface OutboxRelay {
  start(): Promise<void>;
  /** Publishes everything pending now; resolves with the number of rows published. */
  drain(): Promise<number>;
  stop(): Promise<void>;
}

interface OutboxRow {
  id: number;
  subject: string;
  msg_id: string;
  payload: string;
  headers: Record<string, string>;
}

/**
 * Publishes outbox rows to JetStream. Woken by LISTEN/NOTIFY; several relays (the gateway's, each runner's)
 * take turns under one advisory lock, so rows reach the stream in id order and each run's events in their
 * order; each publish carries `Nats-Msg-Id` so that a row published again after a crash (published, then
 * died before commit) is dropped by JetStream's duplicate window.
 */
export function createOutboxRelay(
  deps: { pool: pg.Pool; nc: NatsConnection; connectionString: string; logger: Logger },
  options: OutboxRelayOptions = {},
): OutboxRelay {
  const batchSize = options.batchSize ?? 256;
  const sweepMs = options.sweepMs ?? 5000;
  const retainMs = options.retainPublishedMs ?? 24 * 3600 * 1000;
  const js: JetStreamClient = jetstream(deps.nc);
  let listener: pg.Client | null = null;
  let sweepTimer: NodeJS.Timeout | null = null;
  let running: Promise<number> | null = null;
  let again = false;
  let stopped = false;

  async function publishBatch(): Promise<number> {
    const client = await deps.pool.connect();
    try {
      await client.query("BEGIN");
      // A relay that lost its network while holding the lock would otherwise hold it, idle in its
      // transaction, until the server noticed the dead peer (hours, by TCP's defaults): every relay would
      // wait behind it. The server ends such a transaction after 15 s; its rows are published again.
      await client.query("SET LOCAL idle_in_transaction_session_timeout = '15s'");
      // One relay publishes at a time (the others wait their turn): two relays publishing disjoint batches
      // at once could put a run's later event on the stream before its earlier one.
      await client.query("SELECT pg_advisory_xact_lock(hashtextextended('steward.outbox.relay', 0))");
      const { rows } = await client.query<OutboxRow>(
        `SELECT id, subject, msg_id, payload, headers FROM outbox
          WHERE published_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE`,
        [batchSize],
      );
      if (rows.length > 0) {
        // Sent in row order on one connection, so JetStream stores them in that order.
        await Promise.all(
          rows.map((row) => {
            const h = natsHeaders();
            for (const [k, v] of Object.entries(row.headers)) h.set(k, v);
            return js.publish(row.subject, row.payload, { msgID: row.msg_id, headers: h });
          }),
        );
        await client.query("UPDATE outbox SET published_at = clock_timestamp() WHERE id = ANY($1::bigint[])", [
          rows.map((r) => r.id),
        ]);
      }
      await client.query("COMMIT");
      return rows.length;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  async function drainAll(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await publishBatch();
      total += n;
      if (n < batchSize) return total;
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

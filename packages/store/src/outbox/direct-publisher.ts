import type pg from "pg";
import { jetstream, type JetStreamClient } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { preparedStatement, type Logger } from "@steward/platform";
import type { OutboxRow } from "./outbox-row";
import { publishTraced } from "./publish-span";

export interface DirectPublisherOptions {
  /** Published rows are marked in one statement per this many ms (or per `markBatch` rows). Default 50. */
  markEveryMs?: number;
  /** Marks written per statement at most. Default 512. */
  markBatch?: number;
}

export interface DirectPublisher {
  /**
   * Publishes a run's rows its caller has just committed (`appendRunEvents` with `publishDirect`), after the
   * run's rows given before; never throws. A row that fails stops the run's direct publishing until `release`.
   * With `last`, the writer writes no more of the run (the gateway creating it): it is released once these are out.
   */
  publish(runId: string, rows: readonly OutboxRow[], options?: { readonly last?: boolean }): void;
  /** Whether a publish of the run failed: its later rows must go through the relays (held rows wait there). */
  failed(runId: string): boolean;
  /**
   * The run's rows given to `publish` and not yet marked published: the writer's own, on their way in order.
   * `appendRunEvents` (`ownRows`) publishes directly only when no other earlier row of the run is unpublished.
   */
  pendingOf(runId: string): string[];
  /** The caller is done with the run (its drive ended): forget it. */
  release(runId: string): void;
  /** Waits for the publishes in flight and writes the marks still pending. */
  stop(): Promise<void>;
}

/** Once per 50 ms of a busy writer: prepared. */
const markPublished = preparedStatement(
  "steward.outbox_mark_published",
  "UPDATE outbox SET published_at = clock_timestamp() WHERE id = ANY($1::bigint[]) AND published_at IS NULL",
);

/**
 * The writer's own publish, right after its commit: the event is on the bus without a relay being woken,
 * taking the relays' lock and claiming the row in a transaction. A run's rows are sent one after the other,
 * each once the one before it is acknowledged, so that no failure can put a later row on the stream before an
 * earlier one: not a dropped connection, and not a stream between two leaders that answers nobody for a moment
 * and then takes what follows. So a row that vouches for the rows before it (`Steward-Published-Through`, a
 * new run's command) is true when sent. Acknowledged rows are marked published in batches, off the caller's
 * path. A row not acknowledged (the bus away, a refusal) or not marked (the writer died) stays held until its
 * grace passes, then a relay publishes it and the run's later rows after it; a row published twice is dropped
 * by JetStream's duplicate window.
 */
export function createDirectPublisher(deps: { pool: pg.Pool; nc: NatsConnection; logger: Logger }, options: DirectPublisherOptions = {}): DirectPublisher {
  const markEveryMs = options.markEveryMs ?? 50;
  const markBatch = options.markBatch ?? 512;
  const js: JetStreamClient = jetstream(deps.nc);
  const acked: string[] = [];
  const chains = new Map<string, Promise<void>>();
  const broken = new Set<string>();
  /** Per run, the ids given to `publish` and not yet marked (nor given up: then they are the relays'). */
  const mine = new Map<string, Set<string>>();
  const runOfRow = new Map<string, string>();
  const forget = (ids: readonly string[]) => {
    for (const id of ids) {
      const runId = runOfRow.get(id);
      runOfRow.delete(id);
      if (runId === undefined) continue;
      const own = mine.get(runId);
      own?.delete(id);
      if (own?.size === 0) mine.delete(runId);
    }
  };
  let timer: NodeJS.Timeout | null = null;
  let marking: Promise<void> = Promise.resolve();

  function mark(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = null;
    while (acked.length > 0) {
      const ids = acked.splice(0, markBatch);
      marking = marking
        .then(() => deps.pool.query(markPublished([ids])))
        .then(
          () => forget(ids),
          // An unmarked row is published again by a relay after its grace, and dropped by JetStream: no loss.
          (err) => {
            forget(ids);
            deps.logger.debug({ error_class: (err as Error)?.name, rows: ids.length }, "could not mark directly published rows");
          },
        );
    }
    return marking;
  }

  function scheduleMark(): void {
    if (acked.length >= markBatch) void mark();
    else if (!timer) {
      timer = setTimeout(() => void mark(), markEveryMs);
      timer.unref();
    }
  }

  /** Each row only once the one before it is acknowledged: a run's later row never reaches the stream first. */
  async function publishInOrder(runId: string, rows: readonly OutboxRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i++) {
      if (broken.has(runId)) return forget(rows.slice(i).map((r) => r.id));
      try {
        await publishTraced(js, rows[i]);
      } catch (err) {
        broken.add(runId);
        deps.logger.debug({ error_class: (err as Error)?.name, outbox_id: rows[i].id }, "direct publish failed; the relays publish the run's rows");
        return forget(rows.slice(i).map((r) => r.id));
      }
      acked.push(rows[i].id);
      scheduleMark();
    }
  }

  return {
    publish(runId, rows, options) {
      if (rows.length === 0) return;
      const own = mine.get(runId) ?? new Set<string>();
      mine.set(runId, own);
      for (const row of rows) {
        own.add(row.id);
        runOfRow.set(row.id, runId);
      }
      const tail = (chains.get(runId) ?? Promise.resolve()).then(() => publishInOrder(runId, rows));
      chains.set(runId, tail);
      void tail.then(() => {
        if (chains.get(runId) !== tail) return;
        chains.delete(runId);
        if (options?.last) broken.delete(runId);
      });
    },
    failed: (runId) => broken.has(runId),
    pendingOf: (runId) => [...(mine.get(runId) ?? [])],
    release(runId) {
      broken.delete(runId);
    },
    async stop() {
      await Promise.allSettled([...chains.values()]);
      await mark();
    },
  };
}

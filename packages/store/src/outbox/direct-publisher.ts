import type pg from "pg";
import type { NatsConnection } from "@nats-io/transport-node";
import { preparedStatement, streamPublisherOf, type Logger } from "@steward/platform";
import type { OutboxRow } from "./outbox-row";
import { LOCK_RUNS_IN_ORDER, SETTLED } from "./bus-settled";
import { publishTraced } from "./publish-span";

export interface DirectPublisherOptions {
  /** What was acknowledged is marked in one statement per this many ms (or per `markBatch` messages). Default 50. */
  markEveryMs?: number;
  /** Acknowledged messages that make the marks be written at once. Default 512. */
  markBatch?: number;
  /**
   * How long the acknowledged copies of a run in hand (`carry`) wait for its writer's next append to mark them, ms;
   * then a mark of their own writes them. Default 250: well inside the grace that keeps them from the relays.
   */
  carryForMs?: number;
}

/** What of a run a writer is publishing itself and has not yet marked on the bus. */
export interface OwnPending {
  /** The lowest version of the run's events it is publishing, or null: none. */
  readonly fromVersion: number | null;
  /**
   * The highest version it is publishing when every version from `fromVersion` up to it is its own (another
   * writer's event between them would not be), else null.
   */
  readonly throughVersion: number | null;
  /** The run's commands (outbox ids) it is publishing. */
  readonly commandIds: readonly string[];
}

export interface DirectPublisher {
  /**
   * Publishes what its caller has just committed of a run (`appendRunEvents` with `publishDirect`: the copies,
   * then the commands), after what was given before; never throws. A failure stops the run's direct publishing
   * until `release`. With `last`, the writer writes no more of the run (the gateway creating it): it is released
   * once these are out.
   */
  publish(runId: string, rows: readonly OutboxRow[], options?: { readonly last?: boolean }): void;
  /** Whether a publish of the run failed: its later events must go through the relays (what is held waits there). */
  failed(runId: string): boolean;
  /**
   * What of the run was given to `publish` and is not yet marked: the writer's own, on its way in order.
   * `appendRunEvents` (`own`) publishes directly only when nothing else of the run before it is unpublished.
   */
  pendingOf(runId: string): OwnPending;
  /**
   * The writer appends to the run again and takes its acknowledged, unmarked copies along: the highest version of
   * them (every event up to it is on the bus), for the append to mark (`AppendRunEventsInput.markOnBus`), or null.
   * The run is in hand until `release`: its copies are left to its appends, for `carryForMs` at most.
   */
  carry(runId: string): number | null;
  /** The append that took `carry`'s version along has committed: the run is marked through it. */
  carried(runId: string, version: number): void;
  /** The caller is done with the run (its drive ended): forget it; what it has not marked goes with the next mark. */
  release(runId: string): void;
  /** Waits for the publishes in flight and writes the marks still pending. */
  stop(): Promise<void>;
}

/**
 * Once per 50 ms of a busy writer: prepared. The runs' rows are locked in id order, so that two writers (or a
 * writer and a relay) marking the same runs never wait for each other in a cycle.
 */
const markPublished = preparedStatement(
  "steward.mark_published",
  `WITH v AS (SELECT * FROM unnest($1::uuid[], $2::int[]) AS v(id, version)),
${LOCK_RUNS_IN_ORDER("v")},
copies AS (
  UPDATE runs r SET published_version = l.version, bus_settled = ${SETTLED("l.version")}
    FROM locked l WHERE r.id = l.id AND r.published_version < l.version)
UPDATE outbox SET published_at = clock_timestamp() WHERE id = ANY($3::bigint[]) AND published_at IS NULL`,
);

/**
 * The writer's own publish, right after its commit: the event is on the bus without a relay being woken,
 * taking the relays' lock and reading it back. A run's messages are sent one after the other, each once the one
 * before it is acknowledged, so that no failure can put a later one on the stream before an earlier one: not a
 * dropped connection, and not a stream between two leaders that answers nobody for a moment and then takes
 * what follows. So a command that vouches for the events before it (`Steward-Published-Through`, a new run's
 * command) is true when sent. What is acknowledged is marked in batches, off the caller's path: a run's
 * `published_version`, a command's `published_at`. What is not acknowledged (the bus away, a refusal) or not
 * marked (the writer died) stays held until its grace passes; then a relay publishes it and the run's later
 * events and commands after it; a message published twice is dropped by JetStream's duplicate window.
 */
export function createDirectPublisher(deps: { pool: pg.Pool; nc: NatsConnection; logger: Logger }, options: DirectPublisherOptions = {}): DirectPublisher {
  const markEveryMs = options.markEveryMs ?? 50;
  const markBatch = options.markBatch ?? 512;
  const carryForMs = options.carryForMs ?? 250;
  const bus = streamPublisherOf(deps.nc);
  /**
   * Acknowledged and not yet marked: per run, the highest version of its copies and when the first of them not
   * marked was acknowledged; the commands' ids.
   */
  const ackedVersions = new Map<string, { version: number; since: number }>();
  let ackedCommands: string[] = [];
  /** Acknowledgements since the last mark (`markBatch`). */
  let ackedCount = 0;
  const chains = new Map<string, Promise<void>>();
  const broken = new Set<string>();
  /** Runs whose writer appends again (`carry`), until `release`: their copies are marked with those appends. */
  const inHand = new Set<string>();
  /** Per run, what was given to `publish` and not yet marked (nor given up: then it is the relays'). */
  const mine = new Map<string, { versions: Set<number>; commands: Set<string> }>();
  const runOfCommand = new Map<string, string>();
  const ownOf = (runId: string) => {
    let own = mine.get(runId);
    if (!own) mine.set(runId, (own = { versions: new Set(), commands: new Set() }));
    return own;
  };
  const dropIfEmpty = (runId: string) => {
    const own = mine.get(runId);
    if (own && own.versions.size === 0 && own.commands.size === 0) mine.delete(runId);
  };
  /** Forgets what is marked or given up: copies of the run up to a version, commands by id. */
  const forgetCopies = (runId: string, through: number) => {
    const own = mine.get(runId);
    if (!own) return;
    for (const v of own.versions) if (v <= through) own.versions.delete(v);
    dropIfEmpty(runId);
  };
  const forgetCommands = (ids: readonly string[]) => {
    for (const id of ids) {
      const runId = runOfCommand.get(id);
      runOfCommand.delete(id);
      if (runId === undefined) continue;
      mine.get(runId)?.commands.delete(id);
      dropIfEmpty(runId);
    }
  };
  const forget = (runId: string, rows: readonly OutboxRow[]) => {
    const copies = rows.filter((r) => r.version !== undefined);
    if (copies.length > 0) forgetCopies(runId, Math.max(...copies.map((r) => r.version!)));
    forgetCommands(rows.filter((r) => r.version === undefined).map((r) => r.id));
  };
  let timer: NodeJS.Timeout | null = null;
  let marking: Promise<void> = Promise.resolve();

  /** Whether a run's acknowledged copies are for a mark of their own now, not for its writer's next append. */
  const due = (runId: string, since: number, now: number) => !inHand.has(runId) || now - since >= carryForMs;

  function mark(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = null;
    if (ackedVersions.size === 0 && ackedCommands.length === 0) return marking;
    const now = performance.now();
    const versions = new Map<string, number>();
    for (const [runId, acked] of ackedVersions) {
      if (!due(runId, acked.since, now)) continue;
      versions.set(runId, acked.version);
      ackedVersions.delete(runId);
    }
    const commands = ackedCommands;
    ackedCommands = [];
    ackedCount = 0;
    // What waits for its writer's append is marked here after all if no append took it in time.
    if (ackedVersions.size > 0) timer = setTimeout(() => void mark(), markEveryMs).unref();
    if (versions.size === 0 && commands.length === 0) return marking;
    const done = () => {
      for (const [runId, v] of versions) forgetCopies(runId, v);
      forgetCommands(commands);
    };
    marking = marking
      .then(() => deps.pool.query(markPublished([[...versions.keys()], [...versions.values()], commands])))
      .then(done, (err) => {
        // What is not marked is published again by a relay after its grace, and dropped by JetStream: no loss.
        done();
        deps.logger.debug({ error_class: (err as Error)?.name, runs: versions.size, commands: commands.length }, "could not mark directly published events");
      });
    return marking;
  }

  function scheduleMark(): void {
    if (ackedCount >= markBatch) void mark();
    else if (!timer) {
      timer = setTimeout(() => void mark(), markEveryMs);
      timer.unref();
    }
  }

  function acked(runId: string, row: OutboxRow): void {
    if (row.version === undefined) ackedCommands.push(row.id);
    else {
      const before = ackedVersions.get(runId);
      ackedVersions.set(runId, { version: Math.max(before?.version ?? 0, row.version), since: before?.since ?? performance.now() });
    }
    ackedCount++;
    scheduleMark();
  }

  /** Each row only once the one before it is acknowledged: a run's later message never reaches the stream first. */
  async function publishInOrder(runId: string, rows: readonly OutboxRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i++) {
      if (broken.has(runId)) return forget(runId, rows.slice(i));
      try {
        await publishTraced(bus, rows[i]);
      } catch (err) {
        broken.add(runId);
        deps.logger.debug({ error_class: (err as Error)?.name, outbox_id: rows[i].id }, "direct publish failed; the relays publish the run's events");
        return forget(runId, rows.slice(i));
      }
      acked(runId, rows[i]);
    }
  }

  return {
    publish(runId, rows, options) {
      if (rows.length === 0) return;
      const own = ownOf(runId);
      for (const row of rows) {
        if (row.version !== undefined) own.versions.add(row.version);
        else {
          own.commands.add(row.id);
          runOfCommand.set(row.id, runId);
        }
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
    pendingOf(runId) {
      const own = mine.get(runId);
      if (!own) return { fromVersion: null, throughVersion: null, commandIds: [] };
      if (own.versions.size === 0) return { fromVersion: null, throughVersion: null, commandIds: [...own.commands] };
      const from = Math.min(...own.versions);
      const through = Math.max(...own.versions);
      return { fromVersion: from, throughVersion: through - from + 1 === own.versions.size ? through : null, commandIds: [...own.commands] };
    },
    carry(runId) {
      inHand.add(runId);
      return ackedVersions.get(runId)?.version ?? null;
    },
    carried(runId, version) {
      const acked = ackedVersions.get(runId);
      if (acked && acked.version <= version) ackedVersions.delete(runId);
      else if (acked) ackedVersions.set(runId, { version: acked.version, since: performance.now() });
      forgetCopies(runId, version);
    },
    release(runId) {
      broken.delete(runId);
      inHand.delete(runId);
    },
    async stop() {
      await Promise.allSettled([...chains.values()]);
      inHand.clear();
      await mark();
    },
  };
}

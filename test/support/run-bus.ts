import type { RunEvent } from "@steward/contract";
import { createLogger, type NatsConnection } from "@steward/platform";
import { createOutboxRelay, type OutboxMessage, type OutboxRelay } from "@steward/store";
import { readSubject } from "./bus";
import type { StoreAndBus } from "./store-bus";
import { waitFor } from "./wait-for";

/** A run's first event, as the specs of the outbox write it. */
export const queuedEvent = (): RunEvent => ({
  type: "run.queued",
  data: {
    input: "q",
    mode: "agent",
    response_language: null,
    created_by: "u",
    created_at: "2026-12-01T10:00:00.000000Z",
    deadline_at: "2026-12-01T10:03:00.000000Z",
    thread_id: null,
  },
});

/** A run's start by `runner`: an event to append after `queuedEvent` as often as a spec needs. */
export const startedEvent = (runner: string): RunEvent => ({ type: "run.started", data: { runner_id: runner, started_at: "2026-12-01T10:00:01.000000Z" } });

const logger = createLogger("run-bus-test", "silent");

/** What the specs of a run's publishing read of the store and the bus, for the namespace of `fx`. */
export function runBusProbes(fx: StoreAndBus) {
  const { names } = fx;
  /** The run's agent.run.requested number `n`. */
  const command = (runId: string, n = 1): OutboxMessage => ({
    subject: names.runRequested,
    msgId: `req-${runId}-${n}`,
    payload: { run_id: runId, n },
    headers: { "Steward-Run-Id": runId },
  });
  const onStream = async (stream: string, subject: string) => (await fx.jsm.streams.info(stream, { subjects_filter: subject })).state.subjects?.[subject] ?? 0;
  /** The run's events on the bus, in stream order: each one's seq. */
  const seqsOnBus = async (runId: string) => (await readSubject(fx.nc, names.eventStream, names.runEvents(runId))).map((m) => Number(m.headers["Steward-Seq"]));
  /** The run's commands on the (work-queue, not consumed here) command stream, in stream order: each one's `n`. */
  const commandsOnBus = async (runId: string) => {
    const { first_seq, last_seq } = (await fx.jsm.streams.info(names.commandStream)).state;
    const out: number[] = [];
    for (let seq = first_seq; seq > 0 && seq <= last_seq; seq++) {
      const m = await fx.jsm.streams.getMessage(names.commandStream, { seq }).catch(() => null);
      if (m?.header.get("Steward-Run-Id") === runId) out.push(m.json<{ n: number }>().n);
    }
    return out;
  };
  /** How far the run's events are on the bus, and whether its writer holds them from the relays. */
  const runOf = async (runId: string) =>
    (
      await fx.pool.query<{ version: number; published_version: number; held: boolean }>(
        "SELECT version, published_version, publish_held_until IS NOT NULL AS held FROM runs WHERE id = $1",
        [runId],
      )
    ).rows[0];
  /** The run's commands in the outbox (no copy is written there). */
  const commandsOf = async (runId: string) =>
    (
      await fx.pool.query<{ published: boolean; held: boolean; after_version: number }>(
        "SELECT published_at IS NOT NULL AS published, retry_at IS NOT NULL AS held, after_version FROM outbox WHERE run_id = $1 ORDER BY id",
        [runId],
      )
    ).rows;
  const allOut = async (runId: string) => {
    const run = await runOf(runId);
    return run.published_version === run.version && (await commandsOf(runId)).every((c) => c.published);
  };
  /** A relay woken only by LISTEN/NOTIFY or a drain: its sweep is minutes away. */
  const newRelay = (): OutboxRelay => createOutboxRelay({ pool: fx.pool, nc: fx.nc, connectionString: fx.url, logger }, { sweepMs: 600_000 });
  /** A relay drained until every event and command of the run is on the bus (what is held once its grace has passed). */
  async function relayPublishesAll(runId: string, what: string): Promise<void> {
    const relay = newRelay();
    try {
      await waitFor(async () => ((await allOut(runId)) ? true : (await relay.drain(), undefined)), { timeoutMs: 10_000, intervalMs: 250, what });
    } finally {
      await relay.stop();
    }
  }
  return { command, onStream, seqsOnBus, commandsOnBus, runOf, commandsOf, allOut, newRelay, relayPublishesAll };
}

/** `nc` recording, for each JetStream publish sent through it, how many acknowledgements had come back before it was sent. */
export function countingConnection(nc: NatsConnection): { conn: NatsConnection; sentAfterAcks: number[] } {
  const sentAfterAcks: number[] = [];
  let acks = 0;
  const conn = new Proxy(nc, {
    get(target, prop, receiver) {
      // A JetStream publish is a publish with a reply subject; its acknowledgement arrives on a subscription.
      if (prop === "publish") {
        return (...args: Parameters<NatsConnection["publish"]>) => {
          if (args[2]?.reply) sentAfterAcks.push(acks);
          return target.publish(...args);
        };
      }
      if (prop === "subscribe") {
        return (subject: string, opts?: Parameters<NatsConnection["subscribe"]>[1]) => {
          const callback = opts?.callback;
          if (!callback) return target.subscribe(subject, opts);
          return target.subscribe(subject, {
            ...opts,
            callback: (err, msg) => {
              if (!err) acks++;
              return callback(err, msg);
            },
          });
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
  return { conn, sentAfterAcks };
}

import type { Pool } from "pg";
import type { RunEvent, RunState, StoredRunEvent } from "@steward/contract";
import { readStream } from "../event-store/read-stream";
import type { OutboxMessage } from "../outbox/enqueue";
import type { DirectPublisher } from "../outbox/direct-publisher";
import { appendRunEvents, type AppendRunEventsInput } from "./append-run-events";
import type { RunAppender } from "./append-runs";
import { ownPublishing } from "./own-publishing";

/** One writer's hold on a run: who it is, and what the command that handed it the run said about the bus. */
export interface OpenRun {
  readonly runId: string;
  readonly tenantId: string;
  /** Recorded in every appended event's metadata. */
  readonly traceparent?: string;
  /** The run's events as the writer already read them (its claim, in the same statement): the first `read` answers with them. */
  readonly events?: readonly StoredRunEvent[];
  /**
   * The command that handed the run over was delivered for the first time: every earlier event of the run went on
   * the bus before it, so the writer may publish its own appends. A redelivery may follow a writer that died with
   * its events still held: then the relays publish.
   */
  readonly firstDelivery?: boolean;
  /** That command's `Steward-Published-Through` (its outbox id): the run's rows up to it were on the bus before it. */
  readonly publishedThrough?: string | null;
}

/** What an append wrote: the events as stored, and the run folded through them. */
export interface Appended {
  readonly events: StoredRunEvent[];
  readonly state: RunState;
}

/** What an append may carry besides its events. */
export interface AppendMore {
  /** The run folded through the events, when the caller's decider already folded them: not folded again. */
  readonly folded?: RunState;
  /** Runner requests written after the events, in the same commit. */
  readonly commands?: readonly OutboxMessage[];
}

/** A run's event stream as one writer sees it: read it, append to it. How the appends reach the bus is not its business. */
export interface RunStream {
  /** The run's events in version order: those it was opened with the first time, else as stored now. */
  read(): Promise<StoredRunEvent[]>;
  /**
   * Appends `events` at `state.version` (a ConcurrencyError when the run moved; EventTooLargeError before anything is
   * written), with `commands` after them. `folded` is the run folded through `events` when the caller has it (its
   * decider folded them): it is written as the projection instead of folding them again.
   */
  append(state: RunState, events: readonly RunEvent[], more?: AppendMore): Promise<Appended>;
  /** The writer is done with the run (its drive ended): what it published and has not marked goes with the next mark. */
  close(): void;
}

export interface RunStreams {
  open(run: OpenRun): RunStream;
}

export interface RunStreamsDeps {
  readonly pool: Pool;
  readonly namespace: string;
  /**
   * Publishes the event copies of the appends right after each commit (else the relays do). A function when the
   * publisher comes and goes with the bus (the gateway's): asked once per append.
   */
  readonly publisher?: DirectPublisher | (() => DirectPublisher | undefined);
  /** Writes the appends together with those of other runs (else each in a statement of its own). */
  readonly appender?: RunAppender;
  /**
   * The writer appends once per `open` and hands the run to a runner (the gateway: an answer, a decision): it
   * publishes an append itself only when the append has commands, and the commands too (its NATS user may), each
   * after the copies it vouches for (`Steward-Published-Through`); then it lets the run go. Default false: the
   * writer drives the run (the runner's loop), appends again and again, and publishes its copies only.
   */
  readonly handsOver?: boolean;
}

/**
 * The event store as a run's writers use it: `open` a run, `read` and `append`. Direct publishing lives here, out
 * of the writers' code (docs/architecture.md, "Outbox relay"). A writer that drives the run (the runner's loop)
 * publishes an append's copies right after the commit only while every earlier event of the run is known to be on
 * the bus or on its way in order: from a command's first delivery, until a read finds that another writer appended
 * (its event may not be out yet), and until one of its publishes fails; then the relays publish, in order. Each of
 * its appends takes the copies acknowledged since the one before to their mark (`markOnBus`), so a driven run's
 * marks cost no statement of their own. A writer that hands the run over (`handsOver`) publishes what it appends
 * with a command, and lets the run go. The statement checks again, itself, that the writer may publish.
 */
export function createRunStreams(deps: RunStreamsDeps): RunStreams {
  const publisherNow = typeof deps.publisher === "function" ? deps.publisher : () => deps.publisher as DirectPublisher | undefined;
  const handsOver = deps.handsOver ?? false;
  const appender = deps.appender;
  const write = appender ? (input: AppendRunEventsInput) => appender.append(input) : (input: AppendRunEventsInput) => appendRunEvents(deps.pool, input);
  return {
    open(run) {
      let opened = run.events;
      let direct = Boolean(run.firstDelivery);
      /** The version the writer last knew the run at (read or appended), or null before it knew any. */
      let known: number | null = opened ? opened.length : null;
      /** An append's input without the bus fields: the run, the events and any commands after them. */
      const appendOf = (state: RunState, events: readonly RunEvent[], more: AppendMore | undefined): AppendRunEventsInput => ({
        runId: run.runId,
        tenantId: run.tenantId,
        state,
        folded: more?.folded,
        events,
        commands: more?.commands,
        namespace: deps.namespace,
        traceparent: run.traceparent,
      });
      return {
        async read() {
          const events = opened ? [...opened] : await readStream(deps.pool, run.runId);
          opened = undefined;
          if (known !== null && events.length !== known) direct = false; // another writer appended
          known = events.length;
          return events;
        },
        async append(state, events, more) {
          if (handsOver) {
            // A hand-over without a command (a cancel) goes by the relays: the runner it stops appends within
            // milliseconds, and its rows would wait behind a held cancel, unmarked, for a relay's next wake-up.
            const publishing = ownPublishing((more?.commands?.length ?? 0) > 0 ? publisherNow() : undefined, run.runId);
            return publishing.handOff(await write({ ...appendOf(state, events, more), ...publishing.fields }));
          }
          const publisher = publisherNow();
          const ownCopies = Boolean(publisher && direct && !publisher.failed(run.runId));
          // The copies acknowledged since the last mark are marked by this append, not by a statement of their own.
          const markOnBus = publisher?.carry(run.runId) ?? null;
          known = state.version;
          const result = await write({
            ...appendOf(state, events, more),
            publishDirect: ownCopies,
            own: ownCopies ? publisher!.pendingOf(run.runId) : undefined,
            publishedThrough: run.publishedThrough,
            markOnBus,
          });
          if (markOnBus !== null) publisher!.carried(run.runId, markOnBus);
          if (ownCopies) publisher!.publish(run.runId, result.direct);
          known = result.state.version;
          return result;
        },
        close() {
          if (!handsOver) publisherNow()?.release(run.runId);
        },
      };
    },
  };
}

import type { ThreadEvent, ThreadOrigin } from "./thread-events";
import type { IsoMicros } from "./time";

/** A thread as its events describe it; the threads projection holds exactly these fields. */
export interface ThreadState {
  readonly status: "new" | "open" | "archived";
  readonly title: string | null;
  readonly created_by: string;
  readonly created_at: IsoMicros | null;
  /** When the last event happened: creation, the last run added, or the archiving. */
  readonly updated_at: IsoMicros | null;
  readonly archived_at: IsoMicros | null;
  readonly run_count: number;
  readonly last_run_id: string | null;
  /** Where a fork was taken; null for a thread that is not a fork. */
  readonly forked_from: ThreadOrigin | null;
  /** A fork's inherited runs, oldest first (they come before the runs added to it); empty otherwise. */
  readonly inherited_run_ids: readonly string[];
  /** Number of events folded so far: the expected version of the next append. */
  readonly version: number;
}

export const initialThreadState: ThreadState = {
  status: "new",
  title: null,
  created_by: "",
  created_at: null,
  updated_at: null,
  archived_at: null,
  run_count: 0,
  last_run_id: null,
  forked_from: null,
  inherited_run_ids: [],
  version: 0,
};

/** One event folded into the thread's state. */
export function evolveThread(state: ThreadState, event: ThreadEvent): ThreadState {
  const next = { ...state, version: state.version + 1 };
  switch (event.type) {
    case "thread.created":
      return {
        ...next,
        status: "open",
        title: event.data.title,
        created_by: event.data.created_by,
        created_at: event.data.created_at,
        updated_at: event.data.created_at,
      };
    case "thread.forked":
      // Only as the second event, with thread.created: a thread does not become a fork later.
      if (state.version !== 1) throw new RangeError("thread.forked must follow thread.created");
      if (event.data.inherited_run_ids.at(-1) !== event.data.forked_from.run_id) throw new RangeError("a fork inherits the runs up to its forked_from.run_id");
      return { ...next, forked_from: event.data.forked_from, inherited_run_ids: event.data.inherited_run_ids };
    case "thread.run_added":
      return { ...next, run_count: state.run_count + 1, last_run_id: event.data.run_id, updated_at: event.data.added_at };
    case "thread.archived":
      return { ...next, status: "archived", archived_at: event.data.archived_at, updated_at: event.data.archived_at };
    default: {
      const unknownEvent: never = event;
      throw new TypeError(`unknown thread event ${(unknownEvent as { type: string }).type}`);
    }
  }
}

export function foldThread(events: readonly ThreadEvent[], from: ThreadState = initialThreadState): ThreadState {
  return events.reduce(evolveThread, from);
}

/** What a client reads for a thread (docs/threads.md). */
export interface ThreadSnapshot {
  readonly id: string;
  readonly title: string | null;
  readonly created_at: IsoMicros;
  readonly updated_at: IsoMicros;
  readonly archived_at: IsoMicros | null;
  readonly run_count: number;
  readonly last_run_id: string | null;
  readonly forked_from: ThreadOrigin | null;
}

/** The snapshot of a folded thread. */
export function threadSnapshotOf(id: string, state: ThreadState): ThreadSnapshot {
  if (state.status === "new" || !state.created_at || !state.updated_at) throw new RangeError(`thread ${id} has no thread.created event`);
  return {
    id,
    title: state.title,
    created_at: state.created_at,
    updated_at: state.updated_at,
    archived_at: state.archived_at,
    run_count: state.run_count,
    last_run_id: state.last_run_id,
    forked_from: state.forked_from,
  };
}

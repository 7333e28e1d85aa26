import type { IsoMicros } from "./time";

/*
 * A thread's own stream (docs/threads.md): a conversation of several runs, event-sourced like a run. Its stream id is
 * the thread's id, in the same events table as the runs' streams; a run names its thread in `run.queued`.
 */

export interface ThreadCreated {
  readonly type: "thread.created";
  readonly data: {
    readonly title: string | null;
    readonly created_by: string;
    readonly created_at: IsoMicros;
  };
}

/** A run was added to the thread: written in the transaction that queued the run. */
export interface ThreadRunAdded {
  readonly type: "thread.run_added";
  readonly data: { readonly run_id: string; readonly added_at: IsoMicros };
}

/** The thread was archived (DELETE): it keeps its runs and takes no new one. */
export interface ThreadArchived {
  readonly type: "thread.archived";
  readonly data: { readonly archived_by: string; readonly archived_at: IsoMicros };
}

/** Where a fork was taken: the thread it was forked from and the run it was forked at. */
export interface ThreadOrigin {
  readonly thread_id: string;
  readonly run_id: string;
}

/**
 * The thread is a fork (docs/threads.md "Fork"): appended with its `thread.created`, in the same statement, and
 * only there. It inherits the source's runs up to and including `forked_from.run_id`, in order; those runs are
 * ended and immutable, so the fork names them instead of copying their events.
 */
export interface ThreadForked {
  readonly type: "thread.forked";
  readonly data: {
    readonly forked_from: ThreadOrigin;
    /** The inherited runs, oldest first (the source's own inherited runs first): never empty, ends with forked_from.run_id. */
    readonly inherited_run_ids: readonly string[];
  };
}

export type ThreadEvent = ThreadCreated | ThreadForked | ThreadRunAdded | ThreadArchived;
export type ThreadEventType = ThreadEvent["type"];

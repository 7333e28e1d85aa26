import type { IsoMicros } from "./time";

/*
 * A thread's own stream (issue 16): a conversation of several runs, event-sourced like a run. Its stream id is
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

export type ThreadEvent = ThreadCreated | ThreadRunAdded | ThreadArchived;
export type ThreadEventType = ThreadEvent["type"];

import { Type } from "@sinclair/typebox";
import { RunSnapshot } from "./run-responses";
import { Nullable } from "./schemas";

/*
 * What the threads routes answer (docs/threads.md), for the OpenAPI document and the e2e check of every answer.
 * Open objects like the runs' (answers are JSON.stringify'd, never filtered); each listed property required.
 */

const Timestamp = (description: string) => Type.String({ description: `${description} (UTC, microseconds, e.g. 2026-01-01T12:00:00.000000Z)` });

/** The snapshot as one shared schema (components/schemas/ThreadSnapshot); routes answer `ThreadSnapshot`. */
export const ThreadSnapshotSchema = Type.Object(
  {
    id: Type.String({ description: "The thread's id (a UUID)" }),
    title: Nullable(Type.String({ description: "As given at creation; null when none was" })),
    created_at: Timestamp("When the thread was created"),
    updated_at: Timestamp("Its last change: creation, the last run added, or archiving"),
    archived_at: Nullable(Timestamp("When it was archived (DELETE); an archived thread takes no new run")),
    run_count: Type.Integer({ description: "Runs added to it" }),
    last_run_id: Nullable(Type.String({ description: "The run added last" })),
    forked_from: Nullable(
      Type.Object(
        {
          thread_id: Type.String({ description: "The thread it was forked from" }),
          run_id: Type.String({ description: "The run it was forked at: the last of the runs it inherited" }),
        },
        { description: "Where a fork was taken (POST /v1/threads/:id/fork); null for a thread that is not a fork" },
      ),
    ),
  },
  {
    $id: "ThreadSnapshot",
    description: "A thread (a conversation of runs) as it stands",
    examples: [
      {
        id: "3d1b7c2a-5e8f-4a90-b1c2-7f6e5d4c3b2a",
        title: "Refund questions",
        created_at: "2026-01-01T12:00:00.000000Z",
        updated_at: "2026-01-01T12:05:00.000000Z",
        archived_at: null,
        run_count: 2,
        last_run_id: "0b6f1c6e-8d1f-4a57-9a35-5d0c2f3e9a10",
        forked_from: null,
      },
    ],
  },
);

export const ThreadSnapshot = Type.Ref(ThreadSnapshotSchema);

export const ThreadPage = Type.Object({
  items: Type.Array(ThreadSnapshot, { description: "The caller's threads that are not archived, most recently active first" }),
  page: Type.Integer(),
  page_size: Type.Integer(),
  total: Type.Integer(),
});

/** GET /v1/threads/:id: the snapshot and its runs: a fork's inherited runs first, then those added to it. */
export const ThreadWithRuns = Type.Object(
  {
    ...ThreadSnapshotSchema.properties,
    inherited_run_count: Type.Integer({
      description: "How many of `runs` (the first ones) a fork inherited from the thread it was forked from; 0 for a thread that is not a fork",
    }),
    runs: Type.Array(RunSnapshot, {
      description: "The thread's runs, oldest first (run snapshots, SPEC §2): a fork's inherited runs, then the runs added to it (run_count of them)",
    }),
  },
  { description: "The thread and its runs" },
);

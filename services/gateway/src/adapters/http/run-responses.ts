import { Type } from "@sinclair/typebox";
import type { RunOutput } from "@steward/contract";
import { STREAM_ONLY_EVENTS } from "./routes/event-stream";
import { Nullable } from "./schemas";

/*
 * What the runs routes answer, for the OpenAPI document and the e2e check of every answer. Objects are open
 * (responses are serialised with JSON.stringify, never through these schemas: nothing is dropped or coerced);
 * the properties listed are those SPEC §2 promises, each required.
 */

const Timestamp = (description: string) => Type.String({ description: `${description} (UTC, microseconds, e.g. 2026-01-01T12:00:00.000000Z)` });

const RunError = Type.Object(
  {
    code: Type.Integer({ description: "A run error code (SPEC §3), e.g. 60405 cancelled, 60406 question unanswered" }),
    message: Type.String(),
    tool_name: Type.Optional(Type.String()),
    step_no: Type.Optional(Type.Integer()),
    cycle_length: Type.Optional(Type.Integer()),
  },
  { description: "Why the run failed or was cancelled" },
);

const Evidence = Type.Object({ document_id: Type.String(), title: Type.String(), snippet: Type.String(), score: Type.Number() });

/** A run's state (SPEC §2), as a snapshot shows it and the admins' list filters by it. */
export const runState = (options: { description?: string } = {}) =>
  Type.Union(
    [
      Type.Literal("queued"),
      Type.Literal("running"),
      Type.Literal("awaiting_input"),
      Type.Literal("awaiting_confirmation"),
      Type.Literal("succeeded"),
      Type.Literal("failed"),
      Type.Literal("cancelled"),
    ],
    options,
  );

/** The snapshot as one shared schema (components/schemas/RunSnapshot); routes answer `RunSnapshotRef`. */
export const RunSnapshotSchema = Type.Object(
  {
    id: Type.String({ description: "The run's id (a UUID)" }),
    state: runState(),
    mode: Type.Union([Type.Literal("agent"), Type.Literal("ask")]),
    input: Type.String(),
    response_language: Nullable(Type.String()),
    created_at: Timestamp("When the run was created"),
    started_at: Nullable(Timestamp("When a runner first started it")),
    finished_at: Nullable(Timestamp("When it reached a terminal state")),
    deadline_at: Timestamp("When it fails unless finished (created_at + 180 s, moved on while it waits for the user)"),
    output: Type.Unsafe<RunOutput | null>(Nullable(Type.Object({ text: Type.String(), evidence: Type.Array(Evidence) }))),
    error: Nullable(RunError),
    usage: Type.Object({ input_tokens: Type.Integer(), output_tokens: Type.Integer(), model_calls: Type.Integer(), tool_calls: Type.Integer() }),
  },
  {
    $id: "RunSnapshot",
    description: "A run as it stands (SPEC §2)",
    examples: [
      {
        id: "0b6f1c6e-8d1f-4a57-9a35-5d0c2f3e9a10",
        state: "succeeded",
        mode: "agent",
        input: "Which regions does the handbook say we ship to?",
        response_language: null,
        created_at: "2026-01-01T12:00:00.000000Z",
        started_at: "2026-01-01T12:00:00.120000Z",
        finished_at: "2026-01-01T12:00:03.400000Z",
        deadline_at: "2026-01-01T12:03:00.000000Z",
        output: {
          text: "EU and US.",
          evidence: [{ document_id: "5c1d2e3f-0000-4000-8000-000000000001", title: "Handbook", snippet: "We ship to the EU and the US.", score: 0.82 }],
        },
        error: null,
        usage: { input_tokens: 412, output_tokens: 38, model_calls: 2, tool_calls: 1 },
      },
    ],
  },
);

export const RunSnapshot = Type.Ref(RunSnapshotSchema);

export const RunPage = Type.Object({
  items: Type.Array(RunSnapshot, { description: "The caller's own runs, newest first" }),
  page: Type.Integer(),
  page_size: Type.Integer(),
  total: Type.Integer(),
});

export const EventItem = Type.Object({
  seq: Type.Integer({ description: "The event's sequence in the run, from 1" }),
  type: Type.String({ description: "run.queued, run.started, thought, tool_call, tool_result, ask_user, confirmation_required, message, run.succeeded, …" }),
  data: Type.Unknown({ description: "The event's payload, by type" }),
  recorded_at: Timestamp("When it was stored"),
});

export const EventPage = Type.Object({
  items: Type.Array(EventItem),
  next_after: Type.Integer({ description: "The `after` of the next page" }),
  has_more: Type.Boolean({ description: "True when the page is full: there may be more" }),
});

/** The stream's media type, described: what `event:` names it sends and what `data:` holds. */
export const EVENT_STREAM_DESCRIPTION = [
  "Server-Sent Events (send `Accept: text/event-stream`): the run's history after `Last-Event-ID` (or `?after`), then live,",
  "ending after the terminal event. Each stored event is sent as `id: <seq>`, `event: <type>` and `data:` the JSON item",
  "of the JSON page ({seq, type, data, recorded_at}). Stored event names include run.queued, run.started, thought,",
  "tool_call, tool_result, ask_user, confirmation_required, message, run.succeeded, run.failed and run.cancelled.",
  `Sent without an id (not stored): ${STREAM_ONLY_EVENTS.join(", ")} — message.delta carries streamed text; a failed run's`,
  "error (and iteration_limit when the step budget ended it) precede its run.failed. `retry: 1000` opens the stream and",
  "`: keep-alive` comments follow every 15 s.",
].join(" ");

export const EventStreamText = Type.String({
  description: EVENT_STREAM_DESCRIPTION,
  examples: ['retry: 1000\n\nid: 1\nevent: run.queued\ndata: {"seq":1,"type":"run.queued","data":{},"recorded_at":"2026-01-01T12:00:00.000000Z"}\n\n'],
});

/** The SSE event names of the stream, for the document's `x-sse-events`. */
export const SSE_EVENT_NAMES = [
  "run.queued",
  "run.started",
  "thought",
  "message.delta",
  "tool_call",
  "tool_result",
  "ask_user",
  "confirmation_required",
  "message",
  "error",
  "iteration_limit",
  "run.succeeded",
  "run.failed",
  "run.cancelled",
] as const;

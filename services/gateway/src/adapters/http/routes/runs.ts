import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { BadRequestError, type Pool } from "@steward/platform";
import type { CreateRun } from "../../../app/create-run";
import type { RunControls } from "../../../app/control-run";
import { createPgRunStore } from "../../pg/run-store";
import { createRunReads, eventItemOf, type RunReads } from "../../../app/read-runs";
import type { RunFeed } from "../../nats/run-feed";
import { principalOf, takePermit, type RoutePolicy } from "../route-guard";
import { traceparentOf } from "../trace-context";
import { problemResponses } from "../openapi/problems";
import { EventPage, EventStreamText, RunPage, RunSnapshot, SSE_EVENT_NAMES } from "../run-responses";
import { resumePoint, streamRunEvents } from "./event-stream";
import { createStreamSlots, STREAM_LIMIT_DEFAULTS, type StreamSlots } from "../stream-slots";
import { ConfirmationBody, CreateRunBody, EventsQuery, InputBody, ListRunsQuery, RunParams, UUID_PATTERN } from "../schemas";
import { pageOf } from "../../../domain/page";

export interface RunRoutesDeps {
  readonly pool: Pool;
  readonly createRun: CreateRun;
  readonly controls: RunControls;
  readonly feed: RunFeed;
  /** Default: reads of `pool`. */
  readonly runs?: RunReads;
  /** The open event streams' bounds (per user, per tenant, in all); default STREAM_LIMIT_DEFAULTS. */
  readonly streamSlots?: StreamSlots;
}

const TAGS = ["runs"];
const SECURITY = [{ bearerAuth: [] }];
const runPolicy = (point: RoutePolicy["point"]): RoutePolicy => ({ point, resource: { type: "run", id: "" } });
const namedRunPolicy = (point: RoutePolicy["point"]): RoutePolicy => ({ point, resource: { type: "run", param: "id" } });
/** A path that cannot name a run is 404 before anything else, as a run that is not the caller's. */
const NAMED_RUN = { notFound: "run not found" } as const;

const CreateRunHeaders = Type.Object({
  "idempotency-key": Type.Optional(
    Type.String({ pattern: "^[\\x21-\\x7e]{1,255}$", description: "1-255 visible ASCII characters: a retried POST returns the run created first" }),
  ),
  "elevation-session": Type.Optional(Type.String({ pattern: UUID_PATTERN.source, description: "The id of an elevation session granted to the caller" })),
});

/** The runs API (SPEC §2): create, list, read, control, and the events as a JSON page or a stream. */
export function registerRunRoutes(app: FastifyInstance, deps: RunRoutesDeps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const runs = deps.runs ?? createRunReads({ runs: createPgRunStore(deps.pool) });
  const streamSlots = deps.streamSlots ?? createStreamSlots(STREAM_LIMIT_DEFAULTS);

  api.post(
    "/v1/agents/runs",
    {
      // The permit's record commits with the run (one commit per POST).
      config: { policy: { ...runPolicy("agent.run.create"), recordWithWork: true } },
      schema: {
        tags: TAGS,
        summary: "Create a run",
        description:
          "Queues a run of the agent (policy point agent.run.create). The answer is the queued snapshot; poll or stream its events. " +
          "With `thread_id` the run continues that thread of the caller's: 404 when it is not one, 409 when it is archived or a run of it is still active.",
        security: SECURITY,
        headers: CreateRunHeaders,
        body: CreateRunBody,
        response: {
          201: { ...RunSnapshot, description: "The queued run; Location names it" },
          // 404 and 409 only with thread_id: a thread not the caller's; archived, or with a run still active.
          ...problemResponses({ body: true, notFound: true, conflict: true }),
        },
      },
    },
    async (request, reply) => {
      const snapshot = await deps.createRun({
        principal: principalOf(request),
        body: request.body,
        idempotencyKey: request.headers["idempotency-key"],
        elevationSessionId: request.headers["elevation-session"],
        traceparent: traceparentOf(request),
        permit: takePermit(request),
      });
      return reply.status(201).header("location", `/v1/agents/runs/${snapshot.id}`).send(snapshot);
    },
  );

  api.get(
    "/v1/agents/runs",
    {
      config: { policy: runPolicy("agent.run.read") },
      schema: {
        tags: TAGS,
        summary: "List the caller's runs",
        description: "The caller's own runs (same tenant, same creator), newest first (policy point agent.run.read).",
        security: SECURITY,
        querystring: ListRunsQuery,
        response: { 200: { ...RunPage, description: "A page of runs" }, ...problemResponses() },
      },
    },
    async (request) => {
      const { page, pageSize } = pageOf(request.query);
      const { items, total } = await runs.list(principalOf(request), { page, pageSize });
      return { items, page, page_size: pageSize, total };
    },
  );

  api.get(
    "/v1/agents/runs/:id",
    {
      config: { policy: namedRunPolicy("agent.run.read"), ...NAMED_RUN },
      schema: {
        tags: TAGS,
        summary: "Read a run",
        description: "The caller's run; somebody else's answers 404 exactly as a run that does not exist. A failed run is 200.",
        security: SECURITY,
        params: RunParams,
        response: { 200: { ...RunSnapshot, description: "The run" }, ...problemResponses({ notFound: true }) },
      },
    },
    async (request) => runs.get(principalOf(request), request.params.id),
  );

  const controlSchema = (summary: string, description: string) => ({
    tags: TAGS,
    summary,
    description: `${description} Only the run's creator (policy point agent.run.control); a run in another state is 409.`,
    security: SECURITY,
    params: RunParams,
  });
  const controlResponses = (body: boolean) => ({
    200: { ...RunSnapshot, description: "The run after the action" },
    ...problemResponses({ body, notFound: true, conflict: true }),
  });

  api.post(
    "/v1/agents/runs/:id/input",
    {
      config: { policy: namedRunPolicy("agent.run.control"), ...NAMED_RUN },
      schema: { ...controlSchema("Answer a question", "Answers the ask_user the run waits for."), body: InputBody, response: controlResponses(true) },
    },
    async (request) => deps.controls.answer(principalOf(request), request.params.id, request.body.answer, traceparentOf(request)),
  );

  api.post(
    "/v1/agents/runs/:id/confirmation",
    {
      config: { policy: { ...namedRunPolicy("agent.run.control"), context: { approval_channel: "api" } }, ...NAMED_RUN },
      schema: {
        ...controlSchema("Decide a confirmation", "Approves or rejects the tool call the run waits for (confirmation_required)."),
        body: ConfirmationBody,
        response: controlResponses(true),
      },
    },
    async (request) =>
      deps.controls.confirm(principalOf(request), request.params.id, request.body.decision, traceparentOf(request), "api", request.body.fingerprint),
  );

  api.post(
    "/v1/agents/runs/:id/cancel",
    {
      config: { policy: namedRunPolicy("agent.run.control"), ...NAMED_RUN },
      schema: { ...controlSchema("Cancel a run", "Cancels the run (error.code 60405)."), response: controlResponses(false) },
    },
    async (request) => deps.controls.cancel(principalOf(request), request.params.id, traceparentOf(request)),
  );

  api.get(
    "/v1/agents/runs/:id/events",
    {
      config: { policy: namedRunPolicy("agent.run.read"), ...NAMED_RUN },
      schema: {
        tags: TAGS,
        summary: "A run's events: a JSON page, or a Server-Sent Events stream",
        "x-sse-events": [...SSE_EVENT_NAMES],
        description:
          "With `Accept: text/event-stream`, the events as Server-Sent Events (resumed after `Last-Event-ID`, else `?after`); " +
          "otherwise a JSON page of stored events after `?after`, at most `?limit`.",
        security: SECURITY,
        params: RunParams,
        querystring: EventsQuery,
        headers: Type.Object({
          "last-event-id": Type.Optional(Type.String({ description: "The `id:` of the last event seen: the stream resumes after it (wins over ?after)" })),
        }),
        response: {
          200: {
            description: "A page of stored events (application/json), or the stream (text/event-stream)",
            content: { "application/json": { schema: EventPage }, "text/event-stream": { schema: EventStreamText } },
          },
          ...problemResponses({ notFound: true }),
        },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const id = request.params.id;
      const query = request.query;
      await runs.get(principal, id);
      if (String(request.headers.accept ?? "").includes("text/event-stream")) {
        // HEAD of a stream: its headers, and no stream (Node would send nothing until the stream ended).
        if (request.method === "HEAD")
          return reply
            .header("content-type", "text/event-stream")
            .header("cache-control", "no-store")
            .send(undefined as unknown as string);
        const after = resumePoint(request.headers["last-event-id"], query.after);
        if (after === null) throw new BadRequestError("Last-Event-ID must be an event sequence number");
        const readEvents = (from: number, limit: number) => runs.events(id, { after: from, limit });
        // A slot of the caller's user and tenant, held until the client goes; refused before the stream opens.
        const release = streamSlots.take(principal);
        reply.raw.once("close", release);
        try {
          return await streamRunEvents({ readEvents, feed: deps.feed, finished: () => runs.finished(principal, id) }, request, reply, id, after);
        } catch (err) {
          release();
          throw err;
        }
      }
      const limit = Number(query.limit ?? 100);
      const items = (await runs.events(id, { after: Number(query.after ?? 0), limit })).map(eventItemOf);
      const last = items[items.length - 1];
      return { items, next_after: last ? last.seq : Number(query.after ?? 0), has_more: items.length === limit };
    },
  );
}

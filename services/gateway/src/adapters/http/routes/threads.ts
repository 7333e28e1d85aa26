import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import type { Pool } from "@steward/platform";
import { createPgThreadStore } from "../../pg/thread-store";
import { createThreads, type Threads } from "../../../app/manage-threads";
import { principalOf, type RoutePolicy } from "../route-guard";
import { traceparentOf } from "../trace-context";
import { problemResponses } from "../openapi/problems";
import { ThreadPage, ThreadSnapshot, ThreadWithRuns } from "../thread-responses";
import { BODY_OPTIONAL, CreateThreadBody, ForkThreadBody, ListThreadsQuery, NoQuery, optionalJsonBody, ThreadParams } from "../schemas";
import { pageOf } from "../../../domain/page";

export interface ThreadRoutesDeps {
  readonly pool: Pool;
  /** Default: threads in `pool`. */
  readonly threads?: Threads;
}

const TAGS = ["threads"];
const SECURITY = [{ bearerAuth: [] }];
/**
 * A thread is a conversation of runs and is guarded by the runs' points (docs/threads.md): whoever may create,
 * read or control runs may do so with threads, and no policy set needs a change. The resource is the runs'.
 */
const threadPolicy = (point: RoutePolicy["point"]): RoutePolicy => ({ point, resource: { type: "run", id: "" } });
/** A path that cannot name a thread is 404 before anything else, as a thread that is not the caller's. */
const NAMED_THREAD = { notFound: "thread not found", pathNamesResource: true } as const;

const CreateThreadHeaders = Type.Object({
  "idempotency-key": Type.Optional(
    Type.String({ pattern: "^[\\x21-\\x7e]{1,255}$", description: "1-255 visible ASCII characters: a retried POST returns the thread created first" }),
  ),
});

/** The threads API (docs/threads.md): create, list, read with its runs, fork, archive. */
export function registerThreadRoutes(app: FastifyInstance, deps: ThreadRoutesDeps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const threads = deps.threads ?? createThreads({ threads: createPgThreadStore(deps.pool) });

  api.post(
    "/v1/threads",
    {
      config: { policy: threadPolicy("agent.run.create") },
      schema: {
        tags: TAGS,
        summary: "Create a thread",
        description:
          "A new, empty thread of the caller's (policy point agent.run.create), with an optional title. Runs join it with `thread_id` in POST /v1/agents/runs.",
        security: SECURITY,
        headers: CreateThreadHeaders,
        body: optionalJsonBody(CreateThreadBody),
        [BODY_OPTIONAL]: true,
        response: { 201: { ...ThreadSnapshot, description: "The thread; Location names it" }, ...problemResponses({ body: true }) },
      },
    },
    async (request, reply) => {
      const thread = await threads.create({
        principal: principalOf(request),
        body: request.body ?? {},
        idempotencyKey: request.headers["idempotency-key"],
        traceparent: traceparentOf(request),
      });
      return reply.status(201).header("location", `/v1/threads/${thread.id}`).send(thread);
    },
  );

  api.get(
    "/v1/threads",
    {
      config: { policy: threadPolicy("agent.run.read") },
      schema: {
        tags: TAGS,
        summary: "List the caller's threads",
        description: "The caller's own threads that are not archived, most recently active first (policy point agent.run.read).",
        security: SECURITY,
        querystring: ListThreadsQuery,
        response: { 200: { ...ThreadPage, description: "A page of threads" }, ...problemResponses() },
      },
    },
    async (request) => {
      const { page, pageSize } = pageOf(request.query);
      const { items, total } = await threads.list(principalOf(request), { page, pageSize });
      return { items, page, page_size: pageSize, total };
    },
  );

  api.get(
    "/v1/threads/:id",
    {
      config: { policy: threadPolicy("agent.run.read"), ...NAMED_THREAD },
      schema: {
        tags: TAGS,
        summary: "Read a thread and its runs",
        description: "The caller's thread (archived or not) with its runs, oldest first; somebody else's answers 404 exactly as one that does not exist.",
        security: SECURITY,
        params: ThreadParams,
        querystring: NoQuery,
        response: { 200: { ...ThreadWithRuns, description: "The thread and its runs" }, ...problemResponses({ notFound: true }) },
      },
    },
    async (request) => threads.get(principalOf(request), request.params.id),
  );

  api.post(
    "/v1/threads/:id/fork",
    {
      config: { policy: threadPolicy("agent.run.create"), ...NAMED_THREAD },
      schema: {
        tags: TAGS,
        summary: "Fork a thread at one of its runs",
        description:
          "A new thread of the caller's (policy point agent.run.create) holding the thread's runs up to and including `at_run_id`, " +
          "which must have ended (else 409); a run that is not one of the thread's is 422. The thread forked is untouched; an archived one may be forked. " +
          "A run in the fork sees those runs as its earlier turns, and never the original's later ones.",
        security: SECURITY,
        params: ThreadParams,
        querystring: NoQuery,
        headers: CreateThreadHeaders,
        body: ForkThreadBody,
        response: {
          201: { ...ThreadSnapshot, description: "The new thread (forked_from set); Location names it" },
          ...problemResponses({ body: true, notFound: true, conflict: true }),
        },
      },
    },
    async (request, reply) => {
      const thread = await threads.fork({
        principal: principalOf(request),
        threadId: request.params.id,
        body: request.body,
        idempotencyKey: request.headers["idempotency-key"],
        traceparent: traceparentOf(request),
      });
      return reply.status(201).header("location", `/v1/threads/${thread.id}`).send(thread);
    },
  );

  api.delete(
    "/v1/threads/:id",
    {
      config: { policy: threadPolicy("agent.run.control"), ...NAMED_THREAD },
      schema: {
        tags: TAGS,
        summary: "Archive a thread",
        description:
          "Archives the caller's thread (policy point agent.run.control): it keeps its runs, leaves the list and takes no new run (409). " +
          "Archiving it again answers it as it is.",
        security: SECURITY,
        params: ThreadParams,
        querystring: NoQuery,
        response: { 200: { ...ThreadSnapshot, description: "The archived thread" }, ...problemResponses({ notFound: true }) },
      },
    },
    async (request) => threads.archive(principalOf(request), request.params.id, traceparentOf(request)),
  );
}

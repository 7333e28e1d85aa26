import type { FastifyInstance, FastifyRequest } from "fastify";
import { randomBytes } from "node:crypto";
import { terminalStatuses, type PolicyPoint } from "@steward/contract";
import { BadRequestError, NotFoundError, type Pool } from "@steward/platform";
import { findOwnRun, listOwnRuns, readStream } from "@steward/store";
import type { Authenticate, Principal } from "../auth";
import type { Authorize } from "../../../app/authorize";
import type { CreateRun } from "../../../app/create-run";
import type { RunControls } from "../../../app/control-run";
import type { RunFeed } from "../../nats/run-feed";
import { resumePoint, streamRunEvents } from "./event-stream";
import { ConfirmationBody, CreateRunBody, EventsQuery, InputBody, ListRunsQuery, UUID_PATTERN, parseOr400, singleValuedQuery } from "../schemas";

export interface RunRoutesDeps {
  readonly pool: Pool;
  readonly authenticate: Authenticate;
  readonly authorize: Authorize;
  readonly createRun: CreateRun;
  readonly controls: RunControls;
  readonly feed: RunFeed;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

const traces = new WeakMap<FastifyRequest, string>();

/** The caller's W3C trace context, or a new one rooted here: one per request, however often it is asked. */
export function traceparentOf(request: FastifyRequest): string {
  const known = traces.get(request);
  if (known) return known;
  const incoming = request.headers.traceparent;
  const traceparent =
    typeof incoming === "string" && TRACEPARENT.test(incoming)
      ? incoming
      : `00-${randomBytes(16).toString("hex")}-${randomBytes(8).toString("hex")}-01`;
  traces.set(request, traceparent);
  return traceparent;
}

export function registerRunRoutes(app: FastifyInstance, deps: RunRoutesDeps): void {
  /** Authenticates, then asks the PDP for the route's declared policy point. */
  async function guard(request: FastifyRequest, point: PolicyPoint, resourceId = ""): Promise<Principal> {
    const principal = await deps.authenticate(request.headers.authorization);
    await deps.authorize(principal, point, { type: "run", id: resourceId }, traceparentOf(request));
    return principal;
  }

  function runIdOf(request: FastifyRequest): string {
    const id = (request.params as { id: string }).id;
    if (!UUID_PATTERN.test(id)) throw new NotFoundError();
    return id;
  }

  app.post("/v1/agents/runs", async (request, reply) => {
    const principal = await guard(request, "agent.run.create");
    if (request.body === null || typeof request.body !== "object" || Array.isArray(request.body)) {
      throw new BadRequestError("the request body must be a JSON object");
    }
    const body = parseOr400(CreateRunBody, request.body, "the request body");
    const key = request.headers["idempotency-key"];
    if (key !== undefined && (typeof key !== "string" || !/^[\x21-\x7e]{1,255}$/.test(key))) {
      throw new BadRequestError("Idempotency-Key must be 1-255 visible ASCII characters");
    }
    const elevation = request.headers["elevation-session"];
    if (elevation !== undefined && (typeof elevation !== "string" || !UUID_PATTERN.test(elevation))) {
      throw new BadRequestError("Elevation-Session must be the id of an elevation session");
    }
    const snapshot = await deps.createRun({
      principal,
      body,
      idempotencyKey: key,
      elevationSessionId: elevation,
      traceparent: traceparentOf(request),
    });
    return reply.status(201).header("location", `/v1/agents/runs/${snapshot.id}`).send(snapshot);
  });

  app.get("/v1/agents/runs", async (request) => {
    const principal = await guard(request, "agent.run.read");
    const query = parseOr400(ListRunsQuery, singleValuedQuery(request.query), "the query");
    const page = Number(query.page ?? 1);
    const pageSize = Number(query.page_size ?? 20);
    const { items, total } = await listOwnRuns(deps.pool, { tenantId: principal.tenantId, userId: principal.userId }, { page, pageSize });
    return { items, page, page_size: pageSize, total };
  });

  app.get("/v1/agents/runs/:id", async (request) => {
    const id = runIdOf(request);
    const principal = await guard(request, "agent.run.read", id);
    const run = await findOwnRun(deps.pool, { tenantId: principal.tenantId, userId: principal.userId }, id);
    if (!run) throw new NotFoundError();
    return run;
  });

  app.post("/v1/agents/runs/:id/input", async (request) => {
    const id = runIdOf(request);
    const principal = await guard(request, "agent.run.control", id);
    const body = parseOr400(InputBody, request.body, "the request body");
    return deps.controls.answer(principal, id, body.answer, traceparentOf(request));
  });

  app.post("/v1/agents/runs/:id/confirmation", async (request) => {
    const id = runIdOf(request);
    const principal = await guard(request, "agent.run.control", id);
    const body = parseOr400(ConfirmationBody, request.body, "the request body");
    return deps.controls.confirm(principal, id, body.decision, traceparentOf(request), body.fingerprint);
  });

  app.post("/v1/agents/runs/:id/cancel", async (request) => {
    const id = runIdOf(request);
    const principal = await guard(request, "agent.run.control", id);
    return deps.controls.cancel(principal, id, traceparentOf(request));
  });

  app.get("/v1/agents/runs/:id/events", async (request, reply) => {
    const id = runIdOf(request);
    const principal = await guard(request, "agent.run.read", id);
    const query = parseOr400(EventsQuery, singleValuedQuery(request.query), "the query");
    const run = await findOwnRun(deps.pool, { tenantId: principal.tenantId, userId: principal.userId }, id);
    if (!run) throw new NotFoundError();
    if (String(request.headers.accept ?? "").includes("text/event-stream")) {
      // HEAD of a stream: its headers, and no stream (Node would send nothing until the stream ended).
      if (request.method === "HEAD") return reply.header("content-type", "text/event-stream").header("cache-control", "no-store").send();
      const after = resumePoint(request.headers["last-event-id"], query.after);
      if (after === null) throw new BadRequestError("Last-Event-ID must be an event sequence number");
      const owner = { tenantId: principal.tenantId, userId: principal.userId };
      const finished = async () => terminalStatuses.includes((await findOwnRun(deps.pool, owner, id))?.state ?? "queued");
      return streamRunEvents({ pool: deps.pool, feed: deps.feed, finished }, request, reply, id, after);
    }
    const limit = Number(query.limit ?? 100);
    const events = await readStream(deps.pool, id, { after: Number(query.after ?? 0), limit });
    const items = events.map((e) => ({ seq: e.metadata.seq, type: e.type, data: e.data, recorded_at: e.metadata.recorded_at }));
    const last = items[items.length - 1];
    return { items, next_after: last ? last.seq : Number(query.after ?? 0), has_more: items.length === limit };
  });
}

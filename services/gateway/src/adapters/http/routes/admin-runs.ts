import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Logger, Pool } from "@steward/platform";
import { createPgAdminRunStore } from "../../pg/admin-run-store";
import { createAdminRunReads, type AdminReader } from "../../../app/read-admin-runs";
import { eventItemOf } from "../../../app/read-runs";
import { principalOf, resourcePolicy, type RoutePolicy } from "../route-guard";
import { traceparentOf } from "../trace-context";
import { problemResponses } from "../openapi/problems";
import { EventPage, RunSnapshotSchema, runState } from "../run-responses";
import { EventsQuery, NoQuery, Nullable, RunParams, UUID_PATTERN } from "../schemas";

export interface AdminRunRoutesDeps {
  readonly pool: Pool;
  readonly logger: Logger;
}

const PAGE = "^[1-9][0-9]{0,8}$";
const PAGE_SIZE = "^([1-9]|[1-9][0-9]|100)$";
/** A user id in a query: no control characters. */
const PRINTABLE = "^[^\\u0000-\\u001f\\u007f-\\u009f]+$";
const INSTANT = "An ISO-8601 date (its start in UTC) or date and time with seconds, up to six fractional digits and a zone (Z or ±hh:mm)";

/** GET /v1/admin/runs: each key at most once; times are checked by the domain (400 when they do not parse). */
const AdminRunsQuery = Type.Object(
  {
    page: Type.Optional(Type.String({ pattern: PAGE, description: "Page number, from 1 (default 1)" })),
    page_size: Type.Optional(Type.String({ pattern: PAGE_SIZE, description: "1-100 (default 20)" })),
    user: Type.Optional(Type.String({ minLength: 1, maxLength: 256, pattern: PRINTABLE, description: "The run's creator" })),
    state: Type.Optional(runState({ description: "The run's state" })),
    code: Type.Optional(Type.String({ pattern: "^[1-9][0-9]{0,8}$", description: "The run's error code (error.code), e.g. 60405" })),
    created_after: Type.Optional(Type.String({ maxLength: 64, description: `Created at or after this instant (inclusive). ${INSTANT}` })),
    created_before: Type.Optional(Type.String({ maxLength: 64, description: `Created before this instant (exclusive). ${INSTANT}` })),
    thread_id: Type.Optional(Type.String({ pattern: UUID_PATTERN.source, description: "The run's thread" })),
  },
  { additionalProperties: false },
);

/** GET /v1/audit/admin-reads */
const AdminReadsQuery = Type.Object(
  {
    page: Type.Optional(Type.String({ pattern: PAGE, description: "Page number, from 1 (default 1)" })),
    page_size: Type.Optional(Type.String({ pattern: PAGE_SIZE, description: "1-100 (default 20)" })),
    user: Type.Optional(Type.String({ minLength: 1, maxLength: 256, pattern: PRINTABLE, description: "The administrator who read" })),
    run_id: Type.Optional(Type.String({ pattern: UUID_PATTERN.source, description: "A run the read showed: who saw this run?" })),
  },
  { additionalProperties: false },
);

export const AdminRun = Type.Object(
  {
    ...RunSnapshotSchema.properties,
    created_by: Type.String({ description: "Whose run it is: its creator" }),
    thread_id: Nullable(Type.String({ description: "The thread it belongs to" })),
  },
  { description: "A run snapshot (SPEC §2) with its creator and thread" },
);

const AdminRunPage = Type.Object({
  items: Type.Array(AdminRun, { description: "The tenant's runs of every user that pass the filters, newest first" }),
  page: Type.Integer(),
  page_size: Type.Integer(),
  total: Type.Integer({ description: "Runs that pass the filters" }),
});

const AdminRead = Type.Object({
  id: Type.Integer(),
  read_at: Type.String({ description: "When the read was recorded, before it was answered (UTC, microseconds)" }),
  user_id: Type.String({ description: "The administrator who read" }),
  route: Type.Union([Type.Literal("GET /v1/admin/runs"), Type.Literal("GET /v1/admin/runs/:id"), Type.Literal("GET /v1/admin/runs/:id/events")]),
  run_id: Nullable(Type.String({ description: "The run the path named; null for the list" })),
  query: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()]), {
    description: "The query as understood: the list's filters (times canonical) and page, or the events' after and limit; {} for one run",
  }),
  run_ids: Type.Array(Type.String(), { description: "The runs the answer showed, in its order" }),
  trace_id: Type.String({ description: "The request's W3C trace id" }),
});

const AdminReadPage = Type.Object({
  items: Type.Array(AdminRead, { description: "Newest first" }),
  page: Type.Integer(),
  page_size: Type.Integer(),
  total: Type.Integer(),
});

/** The admins' own point over the runs' resource: never agent.run.read (SPEC §9). */
const LIST: RoutePolicy = { point: "agent.run.admin_read", resource: { type: "run", id: "" } };
const NAMED: RoutePolicy = { point: "agent.run.admin_read", resource: { type: "run", param: "id" } };
const common = (tags: string[], summary: string, description: string) => ({ tags, summary, description, security: [{ bearerAuth: [] }] });
const RECORDED = "Policy point agent.run.admin_read. Every answer is first recorded in the audit log (GET /v1/audit/admin-reads); when it cannot be, 503.";

const readerOf = (request: FastifyRequest): AdminReader => ({ principal: principalOf(request), traceparent: traceparentOf(request) });

/** The administrators' view of other users' runs and its audit log (docs/admin-runs.md). */
export function registerAdminRunRoutes(app: FastifyInstance, deps: AdminRunRoutesDeps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const reads = createAdminRunReads({ runs: createPgAdminRunStore(deps.pool), logger: deps.logger });

  api.get(
    "/v1/admin/runs",
    {
      config: { policy: LIST },
      schema: {
        ...common(
          ["admin"],
          "List the tenant's runs of every user",
          `Newest first, filtered by creator, state, error code, creation time [created_after, created_before) and thread. ${RECORDED}`,
        ),
        querystring: AdminRunsQuery,
        response: { 200: { ...AdminRunPage, description: "A page of runs" }, ...problemResponses() },
      },
    },
    async (request) => reads.list(readerOf(request), request.query),
  );

  api.get(
    "/v1/admin/runs/:id",
    {
      config: { policy: NAMED, notFound: "run not found" },
      schema: {
        ...common(["admin"], "Read any run of the tenant", `Whoever created it; a run of another tenant is 404. ${RECORDED}`),
        params: RunParams,
        querystring: NoQuery,
        response: { 200: { ...AdminRun, description: "The run, its creator and thread" }, ...problemResponses({ notFound: true }) },
      },
    },
    async (request) => reads.get(readerOf(request), request.params.id),
  );

  api.get(
    "/v1/admin/runs/:id/events",
    {
      config: { policy: NAMED, notFound: "run not found" },
      schema: {
        ...common(
          ["admin"],
          "Read any run's events of the tenant",
          `A JSON page of the run's stored events after \`after\`, at most \`limit\` (the items of GET /v1/agents/runs/:id/events; no stream). ${RECORDED}`,
        ),
        params: RunParams,
        querystring: EventsQuery,
        response: { 200: { ...EventPage, description: "A page of stored events" }, ...problemResponses({ notFound: true }) },
      },
    },
    async (request) => {
      const after = Number(request.query.after ?? 0);
      const limit = Number(request.query.limit ?? 100);
      const items = (await reads.events(readerOf(request), request.params.id, { after, limit })).map(eventItemOf);
      const last = items[items.length - 1];
      return { items, next_after: last ? last.seq : after, has_more: items.length === limit };
    },
  );

  api.get(
    "/v1/audit/admin-reads",
    {
      config: { policy: resourcePolicy("audit.decision.read") },
      schema: {
        ...common(
          ["audit"],
          "The admins' reads of runs",
          "The tenant's recorded reads through GET /v1/admin/runs[/:id[/events]], newest first; `run_id` finds who saw a run. Policy point audit.decision.read.",
        ),
        querystring: AdminReadsQuery,
        response: { 200: { ...AdminReadPage, description: "A page of recorded reads" }, ...problemResponses() },
      },
    },
    async (request) => reads.audit(principalOf(request), request.query),
  );
}

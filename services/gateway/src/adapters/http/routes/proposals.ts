import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import type { Pool } from "@steward/platform";
import { createPgProposalStore } from "../../pg/proposal-store";
import { createProposals, PROPOSALS_RESOURCE, type Proposals } from "../../../app/manage-proposals";
import type { Authorize } from "../../../app/authorize";
import { proposalListRequest } from "../../../domain/proposal-request";
import { principalOf, type RoutePolicy } from "../route-guard";
import { traceparentOf } from "../trace-context";
import { problemResponses } from "../openapi/problems";
import { BODY_OPTIONAL, Nullable, optionalJsonBody, UUID_PATTERN } from "../schemas";

export interface ProposalRoutesDeps {
  readonly pool: Pool;
  readonly authorize: Authorize;
  /** Default: proposals in `pool`. */
  readonly proposals?: Proposals;
}

const Timestamp = (description: string) => Type.String({ description: `${description} (UTC, microseconds, e.g. 2026-01-01T12:00:00.000000Z)` });

/** A knowledge proposal as the routes answer it (docs/memory.md). */
export const Proposal = Type.Object(
  {
    id: Type.String({ description: "The proposal's id (a UUID)" }),
    title: Type.String(),
    content: Type.String({ description: "What the agent proposed to remember; becomes the document's body when applied" }),
    evidence_quote: Nullable(Type.String({ description: "The quote from the run's evidence the agent gave as support" })),
    status: Type.Union([Type.Literal("pending"), Type.Literal("applied"), Type.Literal("dismissed")], {
      description: "pending: waits for a person; applied: a knowledge document; dismissed: never used",
    }),
    thread_id: Nullable(Type.String({ description: "The thread of the run that proposed it; null for a run outside a thread" })),
    run_id: Type.String({ description: "The run that proposed it" }),
    step_no: Type.Integer({ description: "The step of the run whose tool call proposed it" }),
    proposed_by: Type.String({ description: "The run's creator, on whose behalf the agent proposed" }),
    created_at: Timestamp("When it was proposed"),
    decided_at: Nullable(Timestamp("When it was applied or dismissed")),
    decided_by: Nullable(Type.String({ description: "Who applied or dismissed it" })),
    document_id: Nullable(Type.String({ description: "The knowledge document applying it made (GET /v1/knowledge/documents/{id})" })),
  },
  {
    description: "A knowledge entry the agent proposed (propose_knowledge); it is used only once a person applies it",
    examples: [
      {
        id: "0b7c2f4e-9a1d-4e3b-8c5f-6d2a1e0f9b8c",
        title: "Greenland shipping",
        content: "Parcels to Greenland travel by the weekly Nuuk ferry.",
        evidence_quote: "shipped on the weekly ferry to Nuuk",
        status: "pending",
        thread_id: "3d1b7c2a-5e8f-4a90-b1c2-7f6e5d4c3b2a",
        run_id: "6f1e2d3c-4b5a-4c6d-8e7f-9a0b1c2d3e4f",
        step_no: 2,
        proposed_by: "ana",
        created_at: "2026-01-01T12:00:00.000000Z",
        decided_at: null,
        decided_by: null,
        document_id: null,
      },
    ],
  },
);

const ListQuery = Type.Object(
  {
    status: Type.Optional(
      Type.Union([Type.Literal("pending"), Type.Literal("applied"), Type.Literal("dismissed")], { description: "Only proposals in this status" }),
    ),
    thread_id: Type.Optional(Type.String({ pattern: UUID_PATTERN.source, description: "Only proposals of runs of this thread" })),
    scope: Type.Optional(
      Type.Union([Type.Literal("own"), Type.Literal("tenant")], {
        description: "own (default): the caller's own proposals; tenant: every proposal of the tenant (policy point knowledge.proposal.admin, else 403)",
      }),
    ),
    page: Type.Optional(Type.String({ pattern: "^[1-9][0-9]{0,8}$", description: "Page number, from 1 (default 1)" })),
    page_size: Type.Optional(Type.String({ pattern: "^([1-9]|[1-9][0-9]|100)$", description: "1-100 (default 20)" })),
  },
  { additionalProperties: false },
);
const ProposalParams = Type.Object({ id: Type.String({ pattern: UUID_PATTERN.source, description: "A proposal's id (a UUID)" }) });
const EmptyBody = Type.Object({}, { additionalProperties: false, description: "No body, or an empty object" });

const TAGS = ["knowledge"];
const SECURITY = [{ bearerAuth: [] }];
const REVIEW: RoutePolicy = { point: "knowledge.proposal.review", resource: PROPOSALS_RESOURCE };
/** A path that cannot name a proposal is 404 before anything else, as one that is not the caller's. */
const NAMED_PROPOSAL = { notFound: "proposal not found", pathNamesResource: true } as const;

/** Governed memory (docs/memory.md): people list, apply and dismiss what the agent proposed. */
export function registerProposalRoutes(app: FastifyInstance, deps: ProposalRoutesDeps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const proposals = deps.proposals ?? createProposals({ proposals: createPgProposalStore(deps.pool), authorize: deps.authorize });

  api.get(
    "/v1/knowledge/proposals",
    {
      config: { policy: REVIEW },
      schema: {
        tags: TAGS,
        summary: "List knowledge proposals",
        description:
          "The proposals made in the caller's runs (policy point knowledge.proposal.review), newest first; with `scope=tenant`, every " +
          "proposal of the tenant (knowledge.proposal.admin as well). Each key at most once; another key or a bad value is 400.",
        security: SECURITY,
        querystring: ListQuery,
        response: {
          200: Type.Object(
            { items: Type.Array(Proposal), page: Type.Integer(), page_size: Type.Integer(), total: Type.Integer() },
            { description: "A page of proposals" },
          ),
          ...problemResponses(),
        },
      },
    },
    async (request) => {
      const listing = proposalListRequest(request.query);
      const { items, total } = await proposals.list(principalOf(request), listing, traceparentOf(request));
      return { items, page: listing.page, page_size: listing.pageSize, total };
    },
  );

  for (const decision of ["apply", "dismiss"] as const) {
    api.post(
      `/v1/knowledge/proposals/:id/${decision}`,
      {
        config: { policy: REVIEW, ...NAMED_PROPOSAL },
        schema: {
          tags: TAGS,
          summary: decision === "apply" ? "Apply a knowledge proposal" : "Dismiss a knowledge proposal",
          description:
            (decision === "apply"
              ? "Makes the pending proposal a knowledge document (its title and content, chunked and searchable) with its provenance: thread, run, step and proposal. "
              : "Sets the pending proposal aside: it is never used. ") +
            "One's own proposal needs knowledge.proposal.review; another user's of the tenant knowledge.proposal.admin, without which it is 404 " +
            "exactly like one that does not exist. A proposal no longer pending is 409.",
          security: SECURITY,
          params: ProposalParams,
          body: optionalJsonBody(EmptyBody),
          [BODY_OPTIONAL]: true,
          response: {
            200: { ...Proposal, description: decision === "apply" ? "The proposal, applied, with its document_id" : "The proposal, dismissed" },
            ...problemResponses({ body: true, notFound: true, conflict: true }),
          },
        },
      },
      async (request) => proposals.decide(principalOf(request), request.params.id, decision, traceparentOf(request)),
    );
  }
}

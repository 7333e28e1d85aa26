import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Pool } from "@steward/platform";
import { createPgMemberStore } from "../../pg/member-store";
import { createMemberAdmin, type MemberAdmin, type Membership, type MembershipChange } from "../../../app/manage-members";
import { principalOf, resourcePolicy } from "../route-guard";
import { problemResponses } from "../openapi/problems";
import { BODY_OPTIONAL, ChangeId, Nullable, optionalJsonBody } from "../schemas";
import { pageOf } from "../../../domain/page";

export interface MemberRoutesDeps {
  readonly pool: Pool;
  /** Default: memberships in `pool`. */
  readonly members?: MemberAdmin;
}

/** Query values that name a user or a role: no control characters. */
const PRINTABLE = "^[^\\u0000-\\u001f\\u007f-\\u009f]+$";
/** PUT and DELETE of a role: no body, or a closed object with the reason recorded with the change. */
const ChangeBody = Type.Object(
  { reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: "Recorded with the change" })) },
  { additionalProperties: false, examples: [{ reason: "joined the support team" }] },
);
const OptionalChangeBody = optionalJsonBody(ChangeBody);
const ListQuery = Type.Object(
  {
    page: Type.Optional(Type.String({ pattern: "^[1-9][0-9]{0,8}$" })),
    page_size: Type.Optional(Type.String({ pattern: "^([1-9]|[1-9][0-9]|100)$" })),
    role: Type.Optional(Type.String({ minLength: 1, maxLength: 256, pattern: PRINTABLE })),
  },
  { additionalProperties: false },
);
const ChangesQuery = Type.Object(
  {
    user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256, pattern: PRINTABLE })),
    after: Type.Optional(Type.String({ pattern: "^(0|[1-9][0-9]{0,17})$" })),
    limit: Type.Optional(Type.String({ pattern: "^([1-9]|[1-9][0-9]{1,2}|1000)$" })),
  },
  { additionalProperties: false },
);

const memberView = (m: Membership) => ({ user_id: m.user_id, roles: m.roles, updated_at: m.updated_at });
const changeView = (c: MembershipChange) => ({
  id: c.id,
  user_id: c.user_id,
  change: c.change,
  role: c.role,
  roles: c.roles,
  changed_by: c.changed_by,
  reason: c.reason,
  changed_at: c.changed_at,
});

const MemberParams = Type.Object({ user: Type.String({ description: "A user id" }) });
const RoleParams = Type.Object({ user: Type.String({ description: "A user id" }), role: Type.String({ description: "A role name" }) });
const MembershipView = Type.Object({ user_id: Type.String(), roles: Type.Array(Type.String()), updated_at: Type.String() });
const ChangeView = Type.Object({
  id: ChangeId,
  user_id: Type.String(),
  change: Type.Union([Type.Literal("seeded"), Type.Literal("granted"), Type.Literal("revoked")]),
  role: Nullable(Type.String()),
  roles: Type.Array(Type.String(), { description: "The roles right after the change" }),
  changed_by: Type.String(),
  reason: Nullable(Type.String()),
  changed_at: Type.String(),
});

const ADMIN = { policy: resourcePolicy("membership.admin") };
const common = (summary: string, description: string) => ({
  tags: ["members"],
  summary,
  description: `${description} Always the caller's own tenant (policy point membership.admin).`,
  security: [{ bearerAuth: [] }],
});

/**
 * A tenant's memberships (policy point `membership.admin`): list, read, grant and revoke a user's roles, and
 * the recorded changes. The tenant is the administrator's own, from the token; no route names another.
 */
export function registerMemberRoutes(app: FastifyInstance, deps: MemberRoutesDeps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const members = deps.members ?? createMemberAdmin({ members: createPgMemberStore(deps.pool) });
  const reasonOf = (request: FastifyRequest) => (request.body as { reason?: string } | undefined)?.reason;

  api.get(
    "/v1/admin/members",
    {
      config: ADMIN,
      schema: {
        ...common("List members", "Memberships in user order; `role` keeps those holding it."),
        querystring: ListQuery,
        response: {
          200: Type.Object({ items: Type.Array(MembershipView), page: Type.Integer(), page_size: Type.Integer(), total: Type.Integer() }),
          ...problemResponses(),
        },
      },
    },
    async (request) => {
      const q = request.query;
      const { page, pageSize } = pageOf(q);
      const { items, total } = await members.list(principalOf(request), { page, pageSize, role: q.role });
      return { items: items.map(memberView), page, page_size: pageSize, total };
    },
  );

  api.get(
    "/v1/admin/members/:user",
    {
      config: ADMIN,
      schema: {
        ...common("Read a membership", "One user's roles; 404 when the user has none in the tenant."),
        params: MemberParams,
        response: { 200: MembershipView, ...problemResponses({ notFound: true }) },
      },
    },
    async (request) => memberView(await members.get(principalOf(request), request.params.user)),
  );

  api.put(
    "/v1/admin/members/:user/roles/:role",
    {
      config: ADMIN,
      schema: {
        ...common("Grant a role", "201 with the membership when granted, 200 when the user held it already (nothing recorded)."),
        params: RoleParams,
        body: OptionalChangeBody,
        [BODY_OPTIONAL]: true,
        response: {
          200: { ...MembershipView, description: "Held already" },
          201: { ...MembershipView, description: "Granted" },
          ...problemResponses({ body: true }),
        },
      },
    },
    async (request, reply) => {
      const { membership, changed } = await members.grant(principalOf(request), request.params.user, request.params.role, reasonOf(request));
      return reply.status(changed ? 201 : 200).send(memberView(membership));
    },
  );

  api.delete(
    "/v1/admin/members/:user/roles/:role",
    {
      config: ADMIN,
      schema: {
        ...common("Revoke a role", "200 with the roles left (possibly none); 404 when the user does not hold it."),
        params: RoleParams,
        body: OptionalChangeBody,
        [BODY_OPTIONAL]: true,
        response: { 200: MembershipView, ...problemResponses({ body: true, notFound: true }) },
      },
    },
    async (request) => memberView(await members.revoke(principalOf(request), request.params.user, request.params.role, reasonOf(request))),
  );

  api.get(
    "/v1/admin/membership-changes",
    {
      config: ADMIN,
      schema: {
        ...common("Membership changes", "The recorded changes, oldest first, after `after`."),
        querystring: ChangesQuery,
        response: { 200: Type.Object({ items: Type.Array(ChangeView), next_after: ChangeId }), ...problemResponses() },
      },
    },
    async (request) => {
      const q = request.query;
      const items = (await members.changes(principalOf(request), { userId: q.user_id, afterId: Number(q.after ?? 0), limit: Number(q.limit ?? 100) })).map(
        changeView,
      );
      return { items, next_after: items.length ? items[items.length - 1].id : Number(q.after ?? 0) };
    },
  );
}

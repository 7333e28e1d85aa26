import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Pool } from "@steward/platform";
import type { Membership, MembershipChange } from "@steward/store";
import type { Authenticate, Principal } from "../auth";
import type { Authorize } from "../../../app/authorize";
import { createMemberAdmin, type MemberAdmin } from "../../../app/manage-members";
import { parseOr400, singleValuedQuery } from "../schemas";
import { traceparentOf } from "./runs";

export interface MemberRoutesDeps {
  readonly pool: Pool;
  readonly authenticate: Authenticate;
  readonly authorize: Authorize;
  /** Default: memberships in `pool`. */
  readonly members?: MemberAdmin;
}

/** Query values that name a user or a role: no control characters. */
const PRINTABLE = "^[^\\u0000-\\u001f\\u007f-\\u009f]+$";
/** PUT and DELETE of a role: no body, or a closed object with the reason recorded with the change. */
const ChangeBody = Type.Object({ reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })) }, { additionalProperties: false });
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

/**
 * A tenant's memberships (policy point `membership.admin`): list, read, grant and revoke a user's roles, and
 * the recorded changes. The tenant is the administrator's own, from the token; no route names another.
 */
export function registerMemberRoutes(app: FastifyInstance, deps: MemberRoutesDeps): void {
  const members = deps.members ?? createMemberAdmin({ pool: deps.pool });
  async function guard(request: FastifyRequest): Promise<Principal> {
    const principal = await deps.authenticate(request.headers.authorization);
    await deps.authorize(principal, "membership.admin", { type: "resource", id: "membership.admin" }, traceparentOf(request));
    return principal;
  }
  const params = (request: FastifyRequest) => request.params as { user: string; role?: string };
  const reasonOf = (request: FastifyRequest) => (request.body === undefined ? undefined : parseOr400(ChangeBody, request.body, "the request body").reason);

  app.get("/v1/admin/members", async (request) => {
    const p = await guard(request);
    const q = parseOr400(ListQuery, singleValuedQuery(request.query), "the query");
    const page = Number(q.page ?? 1);
    const pageSize = Number(q.page_size ?? 20);
    const { items, total } = await members.list(p, { page, pageSize, role: q.role });
    return { items: items.map(memberView), page, page_size: pageSize, total };
  });

  app.get("/v1/admin/members/:user", async (request) => {
    const p = await guard(request);
    return memberView(await members.get(p, params(request).user));
  });

  app.put("/v1/admin/members/:user/roles/:role", async (request, reply) => {
    const p = await guard(request);
    const reason = reasonOf(request);
    const { user, role } = params(request);
    const { membership, changed } = await members.grant(p, user, role ?? "", reason);
    return reply.status(changed ? 201 : 200).send(memberView(membership));
  });

  app.delete("/v1/admin/members/:user/roles/:role", async (request) => {
    const p = await guard(request);
    const reason = reasonOf(request);
    const { user, role } = params(request);
    return memberView(await members.revoke(p, user, role ?? "", reason));
  });

  app.get("/v1/admin/membership-changes", async (request) => {
    const p = await guard(request);
    const q = parseOr400(ChangesQuery, singleValuedQuery(request.query), "the query");
    const items = (await members.changes(p, { userId: q.user_id, afterId: Number(q.after ?? 0), limit: Number(q.limit ?? 100) })).map(changeView);
    return { items, next_after: items.length ? items[items.length - 1].id : Number(q.after ?? 0) };
  });
}

import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Pool } from "@steward/platform";
import type { DatasetGrant, DatasetGrantChange } from "@steward/store";
import type { Authenticate, Principal } from "../auth";
import type { Authorize } from "../../../app/authorize";
import { createDatasetAdmin, GRANT_ROLES_MAX, type DatasetAdmin } from "../../../app/manage-datasets";
import { parseOr400, singleValuedQuery } from "../schemas";
import { traceparentOf } from "./runs";

export interface DatasetRoutesDeps {
  readonly pool: Pool;
  readonly authenticate: Authenticate;
  readonly authorize: Authorize;
  /** Default: grants in `pool`. */
  readonly datasets?: DatasetAdmin;
}

/** PUT: no body (every member), or a closed object: the roles that may focus it (none: every member) and why. */
const GrantBody = Type.Object(
  {
    roles: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: GRANT_ROLES_MAX })),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  },
  { additionalProperties: false },
);
const RevokeBody = Type.Object({ reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })) }, { additionalProperties: false });
const ChangesQuery = Type.Object(
  {
    dataset: Type.Optional(Type.String({ pattern: "^[a-z][a-z0-9_]{0,62}$" })),
    after: Type.Optional(Type.String({ pattern: "^(0|[1-9][0-9]{0,17})$" })),
    limit: Type.Optional(Type.String({ pattern: "^([1-9]|[1-9][0-9]{1,2}|1000)$" })),
  },
  { additionalProperties: false },
);

const grantView = (g: DatasetGrant) => ({ dataset: g.dataset, roles: g.roles, granted_by: g.granted_by, reason: g.reason, granted_at: g.granted_at });
const changeView = (c: DatasetGrantChange) => ({
  id: c.id,
  dataset: c.dataset,
  change: c.change,
  roles: c.roles,
  changed_by: c.changed_by,
  reason: c.reason,
  changed_at: c.changed_at,
});

/**
 * A tenant's datasets (policy point `dataset.admin`): which of the datasets tool-exec serves the tenant's members
 * may focus, to all members or to some roles, and the recorded changes. The tenant is the administrator's own,
 * from the token; no route names another.
 */
export function registerDatasetRoutes(app: FastifyInstance, deps: DatasetRoutesDeps): void {
  const datasets = deps.datasets ?? createDatasetAdmin({ pool: deps.pool });
  async function guard(request: FastifyRequest): Promise<Principal> {
    const principal = await deps.authenticate(request.headers.authorization);
    await deps.authorize(principal, "dataset.admin", { type: "resource", id: "dataset.admin" }, traceparentOf(request));
    return principal;
  }
  const datasetOf = (request: FastifyRequest) => (request.params as { dataset: string }).dataset;

  app.get("/v1/admin/datasets", async (request) => {
    const p = await guard(request);
    return { items: (await datasets.list(p)).map(grantView) };
  });

  app.put("/v1/admin/datasets/:dataset", async (request, reply) => {
    const p = await guard(request);
    const body = request.body === undefined ? {} : parseOr400(GrantBody, request.body, "the request body");
    const { grant, changed } = await datasets.grant(p, datasetOf(request), body.roles ?? [], body.reason);
    request.log.info({ tenant_id: p.tenantId, dataset: grant.dataset, roles: grant.roles, changed }, "dataset granted");
    return reply.status(changed ? 201 : 200).send(grantView(grant));
  });

  app.delete("/v1/admin/datasets/:dataset", async (request) => {
    const p = await guard(request);
    const reason = request.body === undefined ? undefined : parseOr400(RevokeBody, request.body, "the request body").reason;
    const revoked = await datasets.revoke(p, datasetOf(request), reason);
    request.log.info({ tenant_id: p.tenantId, dataset: revoked.dataset }, "dataset grant revoked");
    return grantView(revoked);
  });

  app.get("/v1/admin/dataset-changes", async (request) => {
    const p = await guard(request);
    const q = parseOr400(ChangesQuery, singleValuedQuery(request.query), "the query");
    const items = (await datasets.changes(p, { dataset: q.dataset, afterId: Number(q.after ?? 0), limit: Number(q.limit ?? 100) })).map(changeView);
    return { items, next_after: items.length ? items[items.length - 1].id : Number(q.after ?? 0) };
  });
}

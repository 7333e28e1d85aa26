import { Type } from "@sinclair/typebox";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import type { Pool } from "@steward/platform";
import { NO_DATASET_TENANTS, type DatasetTenants } from "@steward/store";
import { createPgDatasetGrantStore } from "../../pg/dataset-grant-store";
import { createDatasetAdmin, GRANT_ROLES_MAX, type DatasetAdmin, type DatasetGrant, type DatasetGrantChange } from "../../../app/manage-datasets";
import { principalOf, resourcePolicy } from "../route-guard";
import { problemResponses } from "../openapi/problems";
import { BODY_OPTIONAL, ChangeId, Nullable, optionalJsonBody } from "../schemas";

export interface DatasetRoutesDeps {
  readonly pool: Pool;
  /** The operator's list of which tenants may have each dataset (DATASET_TENANTS); default: none may. */
  readonly datasetTenants?: DatasetTenants;
  /** Default: grants in `pool`, of the datasets `datasetTenants` lists for the tenant. */
  readonly datasets?: DatasetAdmin;
}

/** PUT: no body (every member), or a closed object: the roles that may focus it (none: every member) and why. */
const GrantBody = Type.Object(
  {
    roles: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: GRANT_ROLES_MAX })),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  },
  { additionalProperties: false, examples: [{ roles: ["analyst"], reason: "quarterly sales review" }] },
);
const RevokeBody = Type.Object(
  { reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })) },
  { additionalProperties: false, examples: [{ reason: "review finished" }] },
);
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

const DatasetParams = Type.Object({ dataset: Type.String({ description: "A dataset name: 1-63 lower-case letters, digits or _, starting with a letter" }) });
const GrantView = Type.Object({
  dataset: Type.String(),
  roles: Type.Array(Type.String(), { description: "The roles that may focus it; empty: every member" }),
  granted_by: Type.String(),
  reason: Nullable(Type.String()),
  granted_at: Type.String(),
});
const ChangeView = Type.Object({
  id: ChangeId,
  dataset: Type.String(),
  change: Type.String({ description: "granted or revoked" }),
  roles: Type.Array(Type.String()),
  changed_by: Type.String(),
  reason: Nullable(Type.String()),
  changed_at: Type.String(),
});

const ADMIN = { policy: resourcePolicy("dataset.admin") };
const common = (summary: string, description: string) => ({
  tags: ["datasets"],
  summary,
  description: `${description} Always the caller's own tenant (policy point dataset.admin).`,
  security: [{ bearerAuth: [] }],
});

/**
 * A tenant's datasets (policy point `dataset.admin`): which of the datasets tool-exec serves the tenant's members
 * may focus, to all members or to some roles, and the recorded changes. The tenant is the administrator's own,
 * from the token; no route names another.
 */
export function registerDatasetRoutes(app: FastifyInstance, deps: DatasetRoutesDeps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const datasets = deps.datasets ?? createDatasetAdmin({ grants: createPgDatasetGrantStore(deps.pool), listed: deps.datasetTenants ?? NO_DATASET_TENANTS });

  api.get(
    "/v1/admin/datasets",
    {
      config: ADMIN,
      schema: {
        ...common("List dataset grants", "The datasets the tenant's members may focus."),
        response: { 200: Type.Object({ items: Type.Array(GrantView) }), ...problemResponses() },
      },
    },
    async (request) => ({ items: (await datasets.list(principalOf(request))).map(grantView) }),
  );

  api.put(
    "/v1/admin/datasets/:dataset",
    {
      config: ADMIN,
      schema: {
        ...common(
          "Grant a dataset",
          "To every member (no body, or no roles) or to some roles: 201 when granted or changed, 200 when granted so already. 404 for a dataset the operator does not make available to the tenant (DATASET_TENANTS), whether or not it exists.",
        ),
        params: DatasetParams,
        body: optionalJsonBody(GrantBody),
        [BODY_OPTIONAL]: true,
        response: {
          200: { ...GrantView, description: "Granted so already" },
          201: { ...GrantView, description: "Granted" },
          ...problemResponses({ body: true, notFound: true }),
        },
      },
    },
    async (request, reply) => {
      const p = principalOf(request);
      const body = (request.body ?? {}) as { roles?: string[]; reason?: string };
      const { grant, changed } = await datasets.grant(p, request.params.dataset, body.roles ?? [], body.reason);
      request.log.info({ tenant_id: p.tenantId, dataset: grant.dataset, roles: grant.roles, changed }, "dataset granted");
      return reply.status(changed ? 201 : 200).send(grantView(grant));
    },
  );

  api.delete(
    "/v1/admin/datasets/:dataset",
    {
      config: ADMIN,
      schema: {
        ...common("Revoke a dataset grant", "404 when the tenant holds no grant of this name."),
        params: DatasetParams,
        body: optionalJsonBody(RevokeBody),
        [BODY_OPTIONAL]: true,
        response: { 200: GrantView, ...problemResponses({ body: true, notFound: true }) },
      },
    },
    async (request) => {
      const p = principalOf(request);
      const revoked = await datasets.revoke(p, request.params.dataset, (request.body as { reason?: string } | undefined)?.reason);
      request.log.info({ tenant_id: p.tenantId, dataset: revoked.dataset }, "dataset grant revoked");
      return grantView(revoked);
    },
  );

  api.get(
    "/v1/admin/dataset-changes",
    {
      config: ADMIN,
      schema: {
        ...common("Dataset grant changes", "The recorded grants and revocations, oldest first, after `after`."),
        querystring: ChangesQuery,
        response: { 200: Type.Object({ items: Type.Array(ChangeView), next_after: ChangeId }), ...problemResponses() },
      },
    },
    async (request) => {
      const q = request.query;
      const items = (await datasets.changes(principalOf(request), { dataset: q.dataset, afterId: Number(q.after ?? 0), limit: Number(q.limit ?? 100) })).map(
        changeView,
      );
      return { items, next_after: items.length ? items[items.length - 1].id : Number(q.after ?? 0) };
    },
  );
}

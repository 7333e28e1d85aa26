import type { EntityJson } from "@cedar-policy/cedar-wasm/nodejs";

const NS = "Steward";

/** The Cedar entity of a resource named in a decision request. */
export function resourceUid(type: string, id: string): { type: string; id: string } {
  if (type === "tool") return { type: `${NS}::Tool`, id };
  if (type === "run") return { type: `${NS}::Run`, id: id || "*" };
  return { type: `${NS}::Resource`, id: id || type || "*" };
}

/**
 * The entities of one decision: the principal (a member of each of its current roles, in its tenant), the
 * roles, and the resource with its attributes.
 */
export function entitiesFor(input: {
  tenantId: string;
  userId: string;
  roles: readonly string[];
  resource: { type: string; id: string };
  toolSafety?: string;
}): EntityJson[] {
  const entities: EntityJson[] = [
    {
      uid: { type: `${NS}::User`, id: input.userId },
      attrs: { tenant: { __entity: { type: `${NS}::Tenant`, id: input.tenantId } } },
      parents: input.roles.map((r) => ({ type: `${NS}::Role`, id: r })),
    },
    { uid: { type: `${NS}::Tenant`, id: input.tenantId }, attrs: {}, parents: [] },
    ...input.roles.map((r) => ({ uid: { type: `${NS}::Role`, id: r }, attrs: {}, parents: [] })),
  ];
  const resource = resourceUid(input.resource.type, input.resource.id);
  entities.push({
    uid: resource,
    attrs: resource.type === `${NS}::Tool` ? { safety: input.toolSafety ?? "read" } : {},
    parents: [],
  });
  return entities;
}

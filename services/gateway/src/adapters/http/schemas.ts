import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { BadRequestError } from "@steward/platform";

/** POST /v1/agents/runs: a closed object. Content limits are checked by the service layer (422). */
export const CreateRunBody = Type.Object(
  {
    input: Type.String(),
    response_language: Type.Optional(Type.String()),
    mode: Type.Optional(Type.Union([Type.Literal("agent"), Type.Literal("ask")])),
  },
  { additionalProperties: false },
);
export type CreateRunBody = Static<typeof CreateRunBody>;

/** GET /v1/agents/runs: each key at most once, digits only, within range. */
export const ListRunsQuery = Type.Object(
  {
    page: Type.Optional(Type.String({ pattern: "^[1-9][0-9]{0,8}$" })),
    page_size: Type.Optional(Type.String({ pattern: "^([1-9]|[1-9][0-9]|100)$" })),
    sort: Type.Optional(Type.Literal("created_at desc")),
  },
  { additionalProperties: false },
);

/** POST /v1/agents/runs/:id/input */
export const InputBody = Type.Object({ answer: Type.String({ minLength: 1, maxLength: 4000 }) }, { additionalProperties: false });

/** POST /v1/agents/runs/:id/confirmation */
export const ConfirmationBody = Type.Object(
  {
    decision: Type.Union([Type.Literal("approve"), Type.Literal("reject")]),
    /** The `fingerprint` of the confirmation_required the client showed; another call waiting → 409. */
    fingerprint: Type.Optional(Type.String({ pattern: "^[0-9a-f]{64}$" })),
  },
  { additionalProperties: false },
);

/** GET /v1/agents/runs/:id/events as a JSON page. */
export const EventsQuery = Type.Object(
  {
    after: Type.Optional(Type.String({ pattern: "^(0|[1-9][0-9]{0,8})$" })),
    limit: Type.Optional(Type.String({ pattern: "^([1-9]|[1-9][0-9]{1,2}|1000)$" })),
  },
  { additionalProperties: false },
);

const compiled = new WeakMap<TSchema, ReturnType<typeof TypeCompiler.Compile>>();

/** Checks a value against a schema; any mismatch is 400/10001 naming the first offending place. */
export function parseOr400<S extends TSchema>(schema: S, value: unknown, what: string): Static<S> {
  let check = compiled.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  if (check.Check(value)) return value as Static<S>;
  const first = check.Errors(value).First();
  const where = first?.path ? ` at ${first.path}` : "";
  throw new BadRequestError(`${what} is malformed${where}${first ? `: ${first.message}` : ""}`);
}

/** Rejects a query string that repeats a key (Fastify turns repeats into arrays). */
export function singleValuedQuery(query: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries((query ?? {}) as Record<string, unknown>)) {
    if (typeof value !== "string") throw new BadRequestError(`query key ${key} may appear only once`);
    out[key] = value;
  }
  return out;
}

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

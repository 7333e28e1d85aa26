import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import type { FastifySchemaCompiler } from "fastify";

/*
 * The request shapes of the runs routes, declared on the routes (schema.body / querystring / params) and checked
 * by Fastify with `validatorCompiler` below before a handler runs. Query values stay the strings they arrived as
 * (a number is a pattern): nothing is coerced, defaulted or dropped; a closed object refuses any other key.
 */

/** An id of a run or a thread: lower-case UUID text. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** POST /v1/agents/runs: a closed object. Content limits are checked by the service layer (422). */
export const CreateRunBody = Type.Object(
  {
    input: Type.String({ description: "What the agent is asked; 1-4000 characters, not only white space (else 422)" }),
    response_language: Type.Optional(Type.String({ description: "The language of the answer, 1-35 characters (else 422)" })),
    mode: Type.Optional(Type.Union([Type.Literal("agent"), Type.Literal("ask")], { description: '"agent" (default) or "ask" (read-only tools)' })),
    thread_id: Type.Optional(
      Type.String({
        pattern: UUID_PATTERN.source,
        description: "Continue this thread of the caller's (docs/threads.md): another's or none is 404, archived or with a run still active is 409",
      }),
    ),
  },
  { additionalProperties: false, examples: [{ input: "Which regions does the handbook say we ship to?", mode: "agent" }] },
);
export type CreateRunBody = Static<typeof CreateRunBody>;

const PAGE = "^[1-9][0-9]{0,8}$";
const PAGE_SIZE = "^([1-9]|[1-9][0-9]|100)$";

/** GET /v1/agents/runs: each key at most once, digits only, within range. */
export const ListRunsQuery = Type.Object(
  {
    page: Type.Optional(Type.String({ pattern: PAGE, description: "Page number, from 1 (default 1)" })),
    page_size: Type.Optional(Type.String({ pattern: PAGE_SIZE, description: "1-100 (default 20)" })),
    sort: Type.Optional(Type.Literal("created_at desc", { description: "The only order served" })),
  },
  { additionalProperties: false },
);

/** POST /v1/threads: no body, or a closed object. The title's content limits are the service layer's (422). */
export const CreateThreadBody = Type.Object(
  { title: Type.Optional(Type.String({ description: "1-200 characters, not only white space, no control characters (else 422)" })) },
  { additionalProperties: false, examples: [{ title: "Refund questions" }] },
);
export type CreateThreadBody = Static<typeof CreateThreadBody>;

/** POST /v1/threads/:id/fork: a closed object. A run that is not the thread's is the service layer's (422). */
export const ForkThreadBody = Type.Object(
  {
    at_run_id: Type.String({
      pattern: UUID_PATTERN.source,
      description: "One of the thread's runs (as GET /v1/threads/:id lists them), ended: the fork holds the runs up to and including it",
    }),
    title: Type.Optional(Type.String({ description: "The fork's title: 1-200 characters, not only white space, no control characters (else 422)" })),
  },
  { additionalProperties: false, examples: [{ at_run_id: "0b6f1c6e-8d1f-4a57-9a35-5d0c2f3e9a10", title: "Refunds, the other way" }] },
);
export type ForkThreadBody = Static<typeof ForkThreadBody>;

/** GET /v1/threads: each key at most once, digits only, within range. */
export const ListThreadsQuery = Type.Object(
  {
    page: Type.Optional(Type.String({ pattern: PAGE, description: "Page number, from 1 (default 1)" })),
    page_size: Type.Optional(Type.String({ pattern: PAGE_SIZE, description: "1-100 (default 20)" })),
  },
  { additionalProperties: false },
);

/** A path naming a thread: an id that is not a UUID cannot name one (404, before anything else). */
export const ThreadParams = Type.Object({ id: Type.String({ pattern: UUID_PATTERN.source, description: "The thread's id (a UUID)" }) });

/** POST /v1/agents/runs/:id/input */
export const InputBody = Type.Object({ answer: Type.String({ minLength: 1, maxLength: 4000 }) }, { additionalProperties: false, examples: [{ answer: "EU" }] });

/** POST /v1/agents/runs/:id/confirmation */
export const ConfirmationBody = Type.Object(
  {
    decision: Type.Union([Type.Literal("approve"), Type.Literal("reject")]),
    /** The `fingerprint` of the confirmation_required the client showed; another call waiting → 409. */
    fingerprint: Type.Optional(
      Type.String({ pattern: "^[0-9a-f]{64}$", description: "The fingerprint of the confirmation_required event shown; another call waiting is 409" }),
    ),
  },
  { additionalProperties: false, examples: [{ decision: "approve" }] },
);

/** GET /v1/agents/runs/:id/events as a JSON page or a stream. */
export const EventsQuery = Type.Object(
  {
    after: Type.Optional(Type.String({ pattern: "^(0|[1-9][0-9]{0,8})$", description: "Events after this sequence number (default 0)" })),
    limit: Type.Optional(Type.String({ pattern: "^([1-9]|[1-9][0-9]{1,2}|1000)$", description: "1-1000 events per page (default 100)" })),
  },
  { additionalProperties: false },
);

/** A path naming a run: a run id that is not a UUID cannot name one (404, before anything else). */
export const RunParams = Type.Object({ id: Type.String({ pattern: UUID_PATTERN.source, description: "The run's id (a UUID)" }) });

/** Query keys a route that takes none refuses. */
export const NoQuery = Type.Object({}, { additionalProperties: false });

/** The first mismatch of a value, as Fastify carries it on its validation error (`error.validation`). */
export interface SchemaMismatch {
  readonly instancePath: string;
  readonly message: string;
}

/**
 * Fastify's validator for every route schema: TypeBox's compiled check, the value as received (a body, or the
 * string values of a query or path), never converted. The first mismatch is reported; problem.ts maps it.
 */
export const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema }) => {
  const check = TypeCompiler.Compile(schema as TSchema);
  return (value: unknown) => {
    if (check.Check(value)) return { value };
    const first = check.Errors(value).First();
    const mismatch: SchemaMismatch = { instancePath: first?.path ?? "", message: first?.message ?? "does not match" };
    return { error: [mismatch] as unknown as Error };
  };
};

/** A value or null (answers only). */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** The id of a recorded change: a 64-bit sequence, sent as PostgreSQL gives it (a decimal string) or a number. */
export const ChangeId = Type.Union([Type.Integer(), Type.String({ pattern: "^(0|[1-9][0-9]*)$" })], { description: "A 64-bit sequence number" });

/** A route schema's mark for the document: the body may be left out (see `optionalJsonBody`). */
export const BODY_OPTIONAL = "x-body-optional";

/**
 * A body that may be left out: checked against `schema` when one is sent (always as application/json, the only
 * type parsed), not when there is none. The route schema also carries `[BODY_OPTIONAL]: true`.
 */
export const optionalJsonBody = <T extends TSchema>(schema: T) => ({ content: { "application/json": { schema } } });

import { Type, type TSchema } from "@sinclair/typebox";
import { ApiErrorCode } from "@steward/contract";
import { BODY_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE } from "../problem";

/** Each HTTP status a route may answer with a problem document, its Steward code, and what it means there. */
const CODES: Record<number, { readonly code: number; readonly meaning: string }> = {
  400: {
    code: ApiErrorCode.malformed,
    meaning: "malformed request: a closed-object violation, a bad or repeated query key, a body that is not JSON, invalid text, a URL that does not decode",
  },
  401: { code: ApiErrorCode.unauthenticated, meaning: "missing or invalid bearer token" },
  403: { code: ApiErrorCode.forbidden, meaning: "the policy decision point denied the route's policy point" },
  404: { code: ApiErrorCode.notFound, meaning: "no such resource, or not the caller's" },
  409: { code: ApiErrorCode.wrongState, meaning: "the run (or thread) is not in a state that accepts this action, or changed meanwhile" },
  413: { code: BODY_TOO_LARGE, meaning: "the request body is larger than 256 KiB" },
  415: { code: UNSUPPORTED_MEDIA_TYPE, meaning: "the request body is not application/json" },
  422: { code: ApiErrorCode.invalidContent, meaning: "content validation failed, or the request holds a value that cannot be stored" },
  429: { code: ApiErrorCode.rateLimited, meaning: "a rate limit of the caller is reached; Retry-After says when to try again" },
  500: { code: ApiErrorCode.internal, meaning: "an unexpected server error (the detail is always `internal error`)" },
  503: { code: ApiErrorCode.unavailable, meaning: "PostgreSQL, the policy decision point or the policy service is unavailable; Retry-After: 1" },
};

/** The shared problem schemas, one per status (added to the app once; routes refer to them). */
export const problemSchemas = (): TSchema[] => Object.keys(CODES).map((status) => problemSchema(Number(status)));

/** Every problem code the gateway's routes answer with, by status. */
export const PROBLEM_CODES: ReadonlyMap<number, number> = new Map(Object.entries(CODES).map(([status, c]) => [Number(status), c.code]));

/** The component name of a status's problem schema. */
export const problemSchemaId = (status: number): string => `Problem${status}`;

/** The problem-details document (RFC 9457) with Steward's numeric code, fixed to one status and its code. */
export function problemSchema(status: number): TSchema {
  const { code, meaning } = CODES[status];
  return Type.Object(
    {
      type: Type.String({ description: "A URI naming the code: https://steward.dev/problems/<code>" }),
      title: Type.String({ description: "The status's reason phrase" }),
      status: Type.Literal(status),
      code: Type.Literal(code, { description: `${code}: ${meaning}` }),
      detail: Type.String({ description: "What was wrong, safe to show; never a token, a secret or a server internal" }),
    },
    {
      $id: problemSchemaId(status),
      description: `${status} / ${code}: ${meaning}`,
      examples: [
        { type: `https://steward.dev/problems/${code}`, title: TITLE_EXAMPLES[status] ?? "Error", status, code, detail: DETAIL_EXAMPLES[status] ?? meaning },
      ],
    },
  );
}

const TITLE_EXAMPLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  409: "Conflict",
  422: "Unprocessable Content",
  429: "Too Many Requests",
};
const DETAIL_EXAMPLES: Record<number, string> = {
  400: "the request body is malformed at /mode: Expected union value",
  401: "missing or invalid credentials",
  404: "run not found",
  429: "too many requests for this user; retry after 12 s",
};

/** What a route may refuse besides the answers every route shares. */
export interface RouteProblems {
  /** The route reads a JSON body: 413 and 415 besides 400. */
  readonly body?: boolean;
  /** The route names a resource (path parameter or lookup) that may not exist or not be the caller's. */
  readonly notFound?: boolean;
  /** The run's state may refuse the action. */
  readonly conflict?: boolean;
  /** The route is public (no token, no policy point): no 401 or 403. */
  readonly public?: boolean;
}

/**
 * The problem answers of a route, as Fastify response schemas: 400, 401, 403, 422, 429, 500 and 503 on every
 * authenticated route (a value PostgreSQL refuses is 422 wherever it comes from), and the others it declares.
 */
export function problemResponses(options: RouteProblems = {}): Record<number, ProblemResponse> {
  const statuses = options.public ? [400, 429, 500, 503] : [400, 401, 403, 422, 429, 500, 503];
  if (options.body) statuses.push(413, 415);
  if (options.notFound) statuses.push(404);
  if (options.conflict) statuses.push(409);
  return Object.fromEntries(statuses.sort((a, b) => a - b).map((s) => [s, problemResponse(s)]));
}

export interface ProblemResponse {
  readonly description: string;
  readonly content: { readonly "application/problem+json": { readonly schema: TSchema } };
}

/** One problem answer, served as application/problem+json. */
export function problemResponse(status: number): ProblemResponse {
  const { code, meaning } = CODES[status];
  return { description: `${status} / ${code}: ${meaning}`, content: { "application/problem+json": { schema: Type.Ref(problemSchemaId(status)) } } };
}

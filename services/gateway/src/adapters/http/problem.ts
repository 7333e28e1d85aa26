import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { RateLimitedError, StewardError, UnavailableError, isPostgresUnavailable, type Logger } from "@steward/platform";

/** The problem-details body every error answer carries (RFC 9457), with Steward's numeric `code`. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  code: number;
  detail: string;
}

const titles: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  408: "Request Timeout",
  409: "Conflict",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  417: "Expectation Failed",
  421: "Misdirected Request",
  422: "Unprocessable Content",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

/** HTTP-only codes, added to SPEC §7's table: the body exceeds the limit; the body is not `application/json`. */
export const BODY_TOO_LARGE = 10413;
export const UNSUPPORTED_MEDIA_TYPE = 10415;

/** The limit on request bodies, in bytes. */
export const BODY_LIMIT = 256 * 1024;

/** The problem document for a status, a Steward code and a detail safe to show. */
export function problemOf(status: number, code: number, detail: string): Problem {
  return { type: `https://steward.dev/problems/${code}`, title: titles[status] ?? "Error", status, code, detail };
}

/** The one place HTTP errors are mapped. 5xx details are hidden and logged instead. */
export function createErrorHandler(logger: Logger) {
  return function handleError(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): void {
    let problem: Problem;
    const invalid = validationProblem(error, request);
    if (invalid) {
      problem = invalid;
    } else if (error instanceof StewardError) {
      problem = problemOf(error.status, error.code, error.message);
    } else if (statusOf(error) === 413) {
      problem = problemOf(413, BODY_TOO_LARGE, `the request body is larger than ${BODY_LIMIT / 1024} KiB`);
    } else if (statusOf(error) === 415) {
      problem = problemOf(415, UNSUPPORTED_MEDIA_TYPE, "the request body must be application/json");
    } else if ((error as { code?: unknown }).code === "FST_ERR_BAD_URL") {
      problem = problemOf(400, 10001, "the request URL is not valid percent-encoded UTF-8");
    } else if (isClientError(statusOf(error))) {
      // Fastify's other rejections: unparsable or empty JSON, a poisoned prototype key.
      problem = problemOf(400, 10001, "the request body is not JSON");
    } else if (isPostgresDataError(error)) {
      // A value PostgreSQL cannot hold (text it cannot encode, a number out of range) comes from the request.
      logger.warn({ req_id: request.id, code: (error as { code?: string }).code }, "PostgreSQL refused a value of the request");
      problem = problemOf(422, 10430, "the request holds a value that cannot be stored");
    } else if (isPostgresUnavailable(error)) {
      // The store is restarting or unreachable: the request may be sent again (a POST with its Idempotency-Key).
      logger.warn({ req_id: request.id, code: (error as { code?: string }).code }, "PostgreSQL unavailable");
      const unavailable = new UnavailableError();
      problem = problemOf(unavailable.status, unavailable.code, unavailable.message);
    } else {
      logger.error({ err: error, req_id: request.id }, "unhandled error");
      problem = problemOf(500, 10500, "internal error");
    }
    if (problem.status === 401) reply.header("www-authenticate", 'Bearer realm="steward"');
    if (problem.status === 503) reply.header("retry-after", "1");
    if (error instanceof RateLimitedError) reply.header("retry-after", String(error.retryAfterSeconds));
    void reply.status(problem.status).type("application/problem+json").send(problem);
  };
}

/** Where a route schema's check failed, in the words of a detail. */
const PLACES: Record<string, string> = { body: "the request body is", querystring: "the query is", headers: "the request headers are" };

/**
 * A request that does not fit its route's schema (Fastify's validation error): 400/10001 naming the place, the
 * query key that was repeated, or 404/10050 for a path that cannot name a resource (the route's `notFound`).
 */
function validationProblem(error: Error, request: FastifyRequest): Problem | null {
  const { validation, validationContext } = error as { validation?: unknown; validationContext?: string };
  if (!Array.isArray(validation) || validationContext === undefined) return null;
  if (validationContext === "params") {
    const notFound = (request.routeOptions.config as { notFound?: string } | undefined)?.notFound;
    return problemOf(404, 10050, notFound ?? "no such resource");
  }
  if (validationContext === "querystring") {
    const repeated = Object.entries((request.query ?? {}) as Record<string, unknown>).find(([, value]) => Array.isArray(value));
    if (repeated) return problemOf(400, 10001, `query key ${repeated[0]} may appear only once`);
  }
  const first = validation[0] as { instancePath?: string; message?: string } | undefined;
  const where = first?.instancePath ? ` at ${first.instancePath}` : "";
  return problemOf(400, 10001, `${PLACES[validationContext] ?? `the ${validationContext} is`} malformed${where}${first?.message ? `: ${first.message}` : ""}`);
}

function statusOf(error: Error): number | undefined {
  const status = (error as { statusCode?: unknown }).statusCode;
  return typeof status === "number" ? status : undefined;
}

function isClientError(status: number | undefined): boolean {
  return status !== undefined && status >= 400 && status < 500;
}

/** SQLSTATE class 22, "data exception". */
function isPostgresDataError(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && /^22[0-9A-Z]{3}$/.test(code);
}

export function notFoundHandler(_request: FastifyRequest, reply: FastifyReply): void {
  void reply
    .status(404)
    .type("application/problem+json")
    .send(problemOf(404, 10050, "no such resource"));
}

import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { StewardError, UnavailableError, isPostgresUnavailable, type Logger } from "@steward/platform";

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
  409: "Conflict",
  422: "Unprocessable Content",
  429: "Too Many Requests",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

function problemOf(status: number, code: number, detail: string): Problem {
  return { type: `https://steward.dev/problems/${code}`, title: titles[status] ?? "Error", status, code, detail };
}

/** The one place HTTP errors are mapped. 5xx details are hidden and logged instead. */
export function createErrorHandler(logger: Logger) {
  return function handleError(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): void {
    let problem: Problem;
    if (error instanceof StewardError) {
      problem = problemOf(error.status, error.code, error.message);
    } else if ("statusCode" in error && typeof error.statusCode === "number" && error.statusCode >= 400 && error.statusCode < 500) {
      // Fastify's own rejections: unparsable JSON, wrong content type, body too large.
      problem = problemOf(400, 10001, "the request body is not a JSON object");
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
    void reply.status(problem.status).type("application/problem+json").send(problem);
  };
}

export function notFoundHandler(_request: FastifyRequest, reply: FastifyReply): void {
  void reply.status(404).type("application/problem+json").send(problemOf(404, 10050, "no such resource"));
}

import { STATUS_CODES, maxHeaderSize, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { FastifyRequest } from "fastify";
import { ApiErrorCode } from "@steward/contract";
import { BadRequestError } from "@steward/platform";
import { problemOf, type Problem } from "./problem";

/** HTTP-only codes beside 10413/10415: the request was not received in time; an unmet `Expect`; a head too large. */
export const REQUEST_TIMEOUT = ApiErrorCode.requestTimeout;
export const EXPECTATION_FAILED = ApiErrorCode.expectationFailed;
export const HEADERS_TOO_LARGE = ApiErrorCode.headersTooLarge;

/*
 * Requests Node refuses before Fastify routes them — a head that is not HTTP/1.1 (an unknown method, bad
 * framing), a head over Node's limit, a request not received within requestTimeout, an `Expect` other than
 * 100-continue, an HTTP/1.1 request without Host — are answered with a problem document like every other 4xx,
 * instead of Fastify's and Node's own bodies. Wired in app.ts and http-limits.ts.
 */

/** The problem for a refusal of Node's HTTP parser, by the error's code. */
export function clientErrorProblem(code: string | undefined): Problem {
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") return problemOf(408, REQUEST_TIMEOUT, "the request was not received in time");
  if (code === "HPE_HEADER_OVERFLOW") {
    return problemOf(431, HEADERS_TOO_LARGE, `the request line and headers are larger than ${Math.floor(maxHeaderSize / 1024)} KiB`);
  }
  return problemOf(400, ApiErrorCode.malformed, "the request is not valid HTTP/1.1");
}

/** Fastify's `clientErrorHandler`: there is no request or reply yet, so the answer is written to the socket. */
export function handleClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody to answer.
  if (err.code === "ECONNRESET" || socket.destroyed) return;
  if (socket.writable) {
    const problem = clientErrorProblem(err.code);
    const body = JSON.stringify(problem);
    socket.write(
      `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\n` +
        "Content-Type: application/problem+json\r\n" +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        "Connection: close\r\n\r\n" +
        body,
    );
  }
  socket.destroy();
}

/** The server's `checkExpectation` listener: only `100-continue` is served (Node answers that one itself). */
export function answerUnmetExpectation(_request: IncomingMessage, response: ServerResponse): void {
  const body = JSON.stringify(problemOf(417, EXPECTATION_FAILED, "the only expectation served is 100-continue"));
  response.writeHead(417, { "content-type": "application/problem+json", "content-length": Buffer.byteLength(body), connection: "close" }).end(body);
}

/** An `onRequest` hook: HTTP/1.1 requires Host (RFC 9112 §3.2); with Node's own check off, it is refused here. */
export async function requireHost(request: FastifyRequest): Promise<void> {
  if (request.raw.httpVersion === "1.1" && request.headers.host === undefined) {
    throw new BadRequestError("an HTTP/1.1 request must carry a Host header");
  }
}

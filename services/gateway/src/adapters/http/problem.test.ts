import type { FastifyReply, FastifyRequest } from "fastify";
import { createLogger } from "@steward/platform";
import { createErrorHandler, type Problem } from "./problem";

/** Maps one error and returns what the client would get. */
function answerTo(error: Error): Problem {
  let sent: Problem | undefined;
  const reply = {
    header: () => reply,
    status: () => reply,
    type: () => reply,
    send: (body: Problem) => {
      sent = body;
      return reply;
    },
  };
  createErrorHandler(createLogger("gateway-test", "silent"))(error, { id: "req-1" } as FastifyRequest, reply as unknown as FastifyReply);
  return sent!;
}

const withProps = (message: string, props: Record<string, unknown>) => Object.assign(new Error(message), props);

describe("the HTTP error mapping", () => {
  it.each([
    ["Fastify's body too large", withProps("too large", { code: "FST_ERR_CTP_BODY_TOO_LARGE", statusCode: 413 }), 413, 10413],
    ["Fastify's unsupported media type", withProps("nope", { code: "FST_ERR_CTP_INVALID_MEDIA_TYPE", statusCode: 415 }), 415, 10415],
    ["Fastify's bad URL", withProps("bad url", { code: "FST_ERR_BAD_URL", statusCode: 400 }), 400, 10001],
    ["Fastify's invalid JSON", withProps("bad json", { code: "FST_ERR_CTP_INVALID_JSON_BODY", statusCode: 400 }), 400, 10001],
    ["PostgreSQL's invalid text representation (22P02)", withProps("invalid input syntax", { code: "22P02" }), 422, 10430],
    ["PostgreSQL's untranslatable character (22P05)", withProps("unsupported Unicode escape", { code: "22P05" }), 422, 10430],
    ["PostgreSQL's numeric out of range (22003)", withProps("out of range", { code: "22003" }), 422, 10430],
    ["a bug", new TypeError("x is undefined"), 500, 10500],
  ])("answers %s with its status and code", (_label, error, status, code) => {
    expect(answerTo(error)).toMatchObject({ status, code });
  });

  it("hides the detail of a 5xx and of a refused stored value", () => {
    expect(answerTo(new TypeError("secret internals")).detail).toBe("internal error");
    expect(answerTo(withProps('invalid input syntax for type json: "\\ud800"', { code: "22P02" })).detail).toBe(
      "the request holds a value that cannot be stored",
    );
  });
});

import type { FastifyInstance } from "fastify";
import { BadRequestError } from "@steward/platform";
import { findJsonFault } from "./valid-text";

/** The deepest nesting of arrays and objects a request body may have (a tool's arguments over MCP need a few). */
export const MAX_BODY_DEPTH = 32;

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The only body parser: `application/json`, decoded as strict UTF-8, parsed with Fastify's own guarded JSON
 * parser, then refused (400/10001) when it nests deeper than MAX_BODY_DEPTH or any key or string holds invalid
 * text. Every route's body comes through here, `/mcp`'s JSON-RPC included. Every other content type is left
 * without a parser, so Fastify answers 415.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body, done) => {
    let text: string;
    try {
      text = strictUtf8.decode(body as Buffer);
    } catch (err) {
      return done(new BadRequestError("the request body is not valid UTF-8", { cause: err }), undefined);
    }
    parseJson(request, text, (err, value) => {
      if (err) return done(err, undefined);
      const fault = findJsonFault(value, MAX_BODY_DEPTH);
      if (fault?.kind === "too_deep") {
        return done(new BadRequestError(`the request body nests arrays and objects more than ${MAX_BODY_DEPTH} levels deep`), undefined);
      }
      if (fault?.kind === "invalid_text") {
        return done(new BadRequestError(`the request body holds invalid text (a lone surrogate or NUL) at ${fault.at}`), undefined);
      }
      done(null, value);
    });
  });
}

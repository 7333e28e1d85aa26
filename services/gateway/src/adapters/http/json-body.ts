import type { FastifyInstance } from "fastify";
import { BadRequestError } from "@steward/platform";
import { MAX_BODY_DEPTH, nestsDeeperThan } from "./body-depth";
import { findInvalidText } from "./valid-text";

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
      if (nestsDeeperThan(value, MAX_BODY_DEPTH)) {
        return done(new BadRequestError(`the request body nests arrays and objects more than ${MAX_BODY_DEPTH} levels deep`), undefined);
      }
      const at = findInvalidText(value);
      if (at !== null) {
        return done(new BadRequestError(`the request body holds invalid text (a lone surrogate or NUL) at ${at}`), undefined);
      }
      done(null, value);
    });
  });
}

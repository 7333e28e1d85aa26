import type { FastifyInstance } from "fastify";
import { validatorCompiler } from "./schemas";

/**
 * Route schemas are the contract: requests are checked against them with TypeBox (schemas.ts: nothing coerced,
 * defaulted or dropped; Ajv is not used), and answers are written with JSON.stringify, never through the response
 * schemas, so no property an answer holds is dropped or coerced by a schema that does not list it. The response
 * schemas document the answers (OpenAPI) and the e2e suites check every answer against them.
 */
export function useRouteSchemas(app: FastifyInstance): void {
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
}

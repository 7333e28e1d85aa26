import { createLogger } from "@steward/platform";
import { buildApp, type AppDeps } from "./adapters/http/app";

/** A dependency the document never calls: building the routes needs its shape, not its work. */
const unused = (): never => {
  throw new Error("the OpenAPI document is built without serving requests");
};

/**
 * The gateway's OpenAPI 3.1 document as the routes declare it, built without a database, a bus or a PDP: the
 * routes are registered with inert dependencies and the document read once they are ready.
 */
export async function buildOpenApiDocument(): Promise<Record<string, unknown>> {
  const deps = {
    logger: createLogger("gateway-openapi", "silent"),
    readiness: { report: unused },
    pool: {},
    authenticate: unused,
    authorize: unused,
    createRun: unused,
    controls: {},
    feed: {},
    policyAdmin: {},
    status: unused,
  } as unknown as AppDeps;
  const app = buildApp(deps);
  try {
    await app.ready();
    return app.swagger() as unknown as Record<string, unknown>;
  } finally {
    await app.close();
  }
}

/** The document as committed in docs/openapi.json: two-space indented, with a final newline. */
export const formatOpenApiDocument = (document: unknown): string => `${JSON.stringify(document, null, 2)}\n`;

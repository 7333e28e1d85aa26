import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createLogger } from "@steward/platform";
import { buildApp, type AppDeps } from "./adapters/http/app";
import { PROBLEM_CODES } from "./adapters/http/openapi/problems";
import { buildOpenApiDocument, formatOpenApiDocument } from "./openapi-document";
import { validateOpenApi } from "./openapi-validity.test-support";

const COMMITTED = join(__dirname, "..", "..", "..", "docs", "openapi.json");

type Operation = {
  security?: unknown[];
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
  "x-sse-events"?: string[];
};
type Document = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, { properties: { code: { enum?: number[]; const?: number } } }>; securitySchemes: Record<string, unknown> };
};

/** The routes buildApp serves, as "METHOD /path/{param}" (HEAD routes are GET's, not documented apart). */
async function servedRoutes(): Promise<string[]> {
  const app = buildApp({ logger: createLogger("gateway-test", "silent") } as unknown as AppDeps);
  const routes: string[] = [];
  app.addHook("onRoute", (route) => {
    if (route.schema?.hide) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const path = route.url.replace(/:([A-Za-z_]+)/g, "{$1}");
    for (const m of methods) if (m !== "HEAD") routes.push(`${m} ${path}`);
  });
  await app.ready();
  await app.close();
  return routes.sort();
}

describe("the gateway's OpenAPI document", () => {
  let document: Document;
  beforeAll(async () => {
    document = (await buildOpenApiDocument()) as unknown as Document;
  });

  it("is a valid OpenAPI 3.1 document", async () => {
    expect(document.openapi).toBe("3.1.0");
    const verdict = await validateOpenApi(document);
    expect(verdict).toMatchObject({ valid: true, version: "3.1" });
  });

  it("is what docs/openapi.json holds (else: npm run openapi -w @steward/gateway, and commit it)", () => {
    expect(readFileSync(COMMITTED, "utf8")).toBe(formatOpenApiDocument(document));
  });

  it("documents every route the gateway serves, and nothing else", async () => {
    const documented = Object.entries(document.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    const served = await servedRoutes();
    expect(served.length).toBeGreaterThan(20);
    expect(documented.sort()).toEqual(served);
  });

  it("gives every route with a token its security scheme and its 401 and 403 problems, with their codes", () => {
    expect(Object.keys(document.components.securitySchemes)).toEqual(["bearerAuth"]);
    const secured = Object.entries(document.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => op.security)
        .map(([m, op]) => ({ route: `${m} ${path}`, op })),
    );
    expect(secured.length).toBeGreaterThan(20);
    const missing = secured.filter(({ op }) =>
      ["400", "401", "403", "429", "500", "503"].some(
        (s) => op.responses[s]?.content?.["application/problem+json"]?.schema?.$ref !== `#/components/schemas/Problem${s}`,
      ),
    );
    expect(missing.map((m) => m.route)).toEqual([]);
    // The probes and the development sign-in (404 outside development) are the only public operations; the
    // reference and the web console's static files are public too, but they are pages, not operations: hidden.
    const publicRoutes = Object.entries(document.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => !op.security)
        .map(([m]) => `${m} ${path}`),
    );
    expect(publicRoutes.sort()).toEqual(["get /healthz", "get /readyz", "post /v1/dev/sign-in"]);
    expect(Object.keys(document.paths).filter((p) => p.startsWith("/console"))).toEqual([]);
  });

  it("lists every problem code with its status (SPEC §7 and the HTTP additions)", () => {
    const codeOf = (status: number) => {
      const code = document.components.schemas[`Problem${status}`]?.properties.code;
      return code?.const ?? code?.enum?.[0];
    };
    for (const [status, code] of PROBLEM_CODES) expect([status, codeOf(status)]).toEqual([status, code]);
    expect([...PROBLEM_CODES.values()].sort()).toEqual([10001, 10011, 10031, 10050, 10090, 10413, 10415, 10429, 10430, 10500, 10503]);
  });

  it("describes the event stream: its media type and the event names SPEC §2 lists", () => {
    const events = document.paths["/v1/agents/runs/{id}/events"].get;
    expect(Object.keys(events.responses["200"].content ?? {}).sort()).toEqual(["application/json", "text/event-stream"]);
    const spec = [
      "run.queued",
      "run.started",
      "thought",
      "message.delta",
      "tool_call",
      "tool_result",
      "ask_user",
      "confirmation_required",
      "message",
      "error",
      "iteration_limit",
      "run.succeeded",
      "run.failed",
      "run.cancelled",
    ];
    expect([...(events["x-sse-events"] ?? [])].sort()).toEqual([...spec].sort());
  });
});

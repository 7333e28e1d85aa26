import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";

/**
 * One call to the gateway as a client makes it: a bearer token, a JSON body; the answer parsed when it is JSON.
 * Every answer is checked against the gateway's own OpenAPI document (GET /openapi.json): an undocumented
 * status or media type, a body that does not fit the documented schema, or anything but a 404 problem for a
 * route the document does not have, fails the call loudly.
 */
export async function callGateway(baseUrl: string, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: checked as it is
  }
  await checkAgainstOpenApi(baseUrl, { method, path, status: res.status, contentType: res.headers.get("content-type"), body: parsed, empty: text === "" });
  return { status: res.status, body: parsed };
}

/** An answer as the client saw it, to check against the document. */
export interface SeenAnswer {
  readonly method: string;
  /** The path as requested; a query string is ignored. */
  readonly path: string;
  readonly status: number;
  readonly contentType: string | null;
  /** The parsed JSON, or the text when it is not JSON. */
  readonly body: unknown;
  readonly empty: boolean;
}

type Json = { [key: string]: any };
interface Route {
  readonly template: string;
  readonly pattern: RegExp;
  readonly params: number;
  readonly operations: Json;
}
interface Contract {
  readonly routes: Route[];
  readonly validators: Map<object, ValidateFunction>;
  readonly ajv: Ajv2020;
  readonly schemas: Json;
}

const contracts = new Map<string, Promise<Contract>>();

/** The document a gateway serves, read once per base URL. */
async function contractOf(baseUrl: string): Promise<Contract> {
  let known = contracts.get(baseUrl);
  if (!known) {
    known = (async () => {
      const res = await fetch(`${baseUrl}/openapi.json`);
      if (res.status !== 200) throw new Error(`GET ${baseUrl}/openapi.json answered ${res.status}`);
      const document = (await res.json()) as Json;
      const routes = Object.entries(document.paths as Json).map(([template, operations]) => ({
        template,
        pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+")}$`),
        params: (template.match(/\{/g) ?? []).length,
        operations: operations as Json,
      }));
      return { routes, validators: new Map(), ajv: new Ajv2020({ strict: false, allErrors: true }), schemas: (document.components?.schemas ?? {}) as Json };
    })();
    contracts.set(baseUrl, known);
    // A gateway that could not be reached for its document is asked again at the next answer.
    known.catch(() => contracts.delete(baseUrl));
  }
  return known;
}

/** A schema with its references to components/schemas put in place (the document has no cycles). */
function inlined(schema: unknown, schemas: Json, depth = 0): unknown {
  if (depth > 32) throw new Error("the OpenAPI document's schemas nest too deep (a cycle?)");
  if (Array.isArray(schema)) return schema.map((s) => inlined(s, schemas, depth + 1));
  if (schema === null || typeof schema !== "object") return schema;
  const { $ref, $id: _id, ...rest } = schema as Json;
  const out: Json = {};
  for (const [k, v] of Object.entries(rest)) out[k] = inlined(v, schemas, depth + 1);
  if (typeof $ref === "string") {
    const name = /^#\/components\/schemas\/(.+)$/.exec($ref)?.[1];
    if (!name || !schemas[name]) throw new Error(`the OpenAPI document refers to an unknown schema ${$ref}`);
    return { ...(inlined(schemas[name], schemas, depth + 1) as Json), ...out };
  }
  return out;
}

/** What any request outside the document is answered with. */
const OUTSIDE_THE_DOCUMENT = { content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem404" } } } };

/** Fails (throws) when the answer is not what the gateway's OpenAPI document says that route answers. */
export async function checkAgainstOpenApi(baseUrl: string, seen: SeenAnswer): Promise<void> {
  let contract: Contract;
  try {
    contract = await contractOf(baseUrl);
  } catch (err) {
    // The gateway went away meanwhile (a fault suite stops it): this answer cannot be checked, the next will be.
    if (err instanceof TypeError) return;
    throw err;
  }
  const where = `${seen.method} ${seen.path} → ${seen.status}`;
  const path = seen.path.split("?")[0];
  const route = contract.routes.filter((r) => r.pattern.test(path)).sort((a, b) => a.params - b.params)[0];
  const operation = route?.operations[seen.method.toLowerCase()];
  // Outside the document (a path or method no route has) the gateway promises one thing: a 404 problem.
  const response = operation ? (operation.responses as Json)[String(seen.status)] : seen.status === 404 ? OUTSIDE_THE_DOCUMENT : undefined;
  if (!operation && !response) throw new Error(`OpenAPI: ${where}: the route is not in the document, yet the answer is not a 404 problem`);
  if (!response) {
    throw new Error(
      `OpenAPI: ${where}: status ${seen.status} is not documented for ${seen.method} ${route.template} (${JSON.stringify(seen.body).slice(0, 300)})`,
    );
  }
  const content = response.content as Json | undefined;
  if (!content) {
    if (!seen.empty) throw new Error(`OpenAPI: ${where}: the document says no body, but one came`);
    return;
  }
  const mediaType = (seen.contentType ?? "").split(";")[0].trim().toLowerCase();
  const media = content[mediaType];
  if (!media) throw new Error(`OpenAPI: ${where}: media type "${mediaType}" is not documented (only ${Object.keys(content).join(", ")})`);
  if (!media.schema) return;
  let validate = contract.validators.get(media);
  if (!validate) {
    validate = contract.ajv.compile(inlined(media.schema, contract.schemas) as Json);
    contract.validators.set(media, validate);
  }
  if (!validate(seen.body)) {
    throw new Error(
      `OpenAPI: ${where}: the body does not fit the documented schema: ${contract.ajv.errorsText(validate.errors)}\n${JSON.stringify(seen.body).slice(0, 1000)}`,
    );
  }
}

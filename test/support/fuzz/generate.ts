import { fuzzBody } from "./bodies";
import { ROUTES, type RouteSpec } from "./catalogue";
import type { FuzzFixture, SeededDocument, SeededRun } from "./fixture";
import { fuzzHeaders, fuzzQuery, ODD_METHODS } from "./http-parts";
import { createRng, requestSeed, type Rng } from "./prng";
import { rawRequest } from "./raw";
import type { FuzzToken } from "./tokens";

/** One generated request: everything needed to send it again, and what it addresses. */
export interface FuzzRequest {
  readonly index: number;
  readonly route: RouteSpec;
  readonly method: string;
  /** Path and query, as sent. */
  readonly target: string;
  readonly headers: Record<string, string>;
  readonly body?: Buffer;
  /** Sent as these bytes over a plain socket instead of through fetch. */
  readonly raw?: Buffer;
  readonly token: FuzzToken;
  readonly run?: SeededRun;
  readonly document?: SeededDocument;
  /** What was bent, for the report. */
  readonly mutations: readonly string[];
}

/** Request `index` of the fuzz run seeded with `seed`: a pure function of both and of the fixture. */
export function generateRequest(seed: number, index: number, fx: FuzzFixture): FuzzRequest {
  const rng = createRng(requestSeed(seed, index));
  const route = rng.weighted(ROUTES.map((r) => [r.weight, r] as const));
  const token = pickToken(rng, fx.tokens);
  const { path, run, document } = route.target(rng, fx, token.expect === "refuse" ? undefined : token.who);
  const mutations: string[] = [];

  const q = fuzzQuery(rng, route.query?.(rng, fx) ?? {});
  if (q.mutation !== "as the route accepts it") mutations.push(`query: ${q.mutation}`);
  const target = q.query === "" ? path : `${path}?${q.query}`;

  let method = route.method;
  if (rng.chance(0.05)) {
    method = rng.pick(ODD_METHODS);
    mutations.push(`method ${method}`);
  }

  const headers: Record<string, string> = { ...(route.headers?.(rng) ?? {}) };
  if (token.header !== undefined) headers.authorization = token.header;
  if (rng.chance(0.2)) {
    const h = fuzzHeaders(rng);
    Object.assign(headers, h.headers);
    mutations.push(`headers: ${h.mutation}`);
  }

  if (rng.chance(0.06)) {
    const raw = rawRequest(rng, method, target, token.header);
    return { index, route, method, target, headers: {}, raw: raw.bytes, token, run, document, mutations: [...mutations, `raw: ${raw.mutation}`] };
  }

  let body: Buffer | undefined;
  const mayHaveBody = method !== "GET" && method !== "HEAD";
  const valid = route.body?.(rng, fx);
  if (mayHaveBody && (valid !== undefined || rng.chance(0.15))) {
    const b = fuzzBody(rng, valid);
    body = b.bytes;
    if (b.contentType === undefined) delete headers["content-type"];
    else headers["content-type"] = b.contentType;
    if (b.mutation !== "as the route accepts it") mutations.push(`body: ${b.mutation}`);
  }
  return { index, route, method, target, headers, body, token, run, document, mutations };
}

/** Mostly the seeded principals (so routes are exercised past authentication), then every other variant. */
function pickToken(rng: Rng, tokens: readonly FuzzToken[]): FuzzToken {
  const core = tokens.filter((t) => t.expect === "accept").slice(0, 6);
  return rng.weighted<() => FuzzToken>([
    [55, () => rng.pick(core)],
    [15, () => rng.pick(tokens.filter((t) => t.expect !== "refuse"))],
    [30, () => rng.pick(tokens.filter((t) => t.expect === "refuse"))],
  ])();
}

/** A short, printable description of a request; the token is named by its label, never printed. */
export function describeRequest(r: FuzzRequest): string {
  const printable = (b: Buffer) => {
    const text = b.toString("latin1").replace(/(Authorization: )[^\r\n]*/gi, "$1<the token>");
    return JSON.stringify(text.slice(0, 400)) + (b.length > 400 ? ` … (${b.length} bytes)` : "");
  };
  const headers = Object.entries(r.headers)
    .filter(([k]) => k !== "authorization")
    .map(([k, v]) => `${k}: ${JSON.stringify(v.slice(0, 120))}${v.length > 120 ? `…(${v.length})` : ""}`)
    .slice(0, 8);
  return [
    `#${r.index} [${r.route.name}] token=${JSON.stringify(r.token.label)}`,
    r.raw ? `raw ${printable(r.raw)}` : `${r.method} ${r.target.slice(0, 300)}${r.target.length > 300 ? `…(${r.target.length})` : ""}`,
    headers.length ? `headers ${headers.join("; ")}${Object.keys(r.headers).length > 9 ? " …" : ""}` : "",
    r.body ? `body ${printable(r.body)}` : "",
    r.mutations.length ? `bent: ${r.mutations.join(" | ")}` : "bent: nothing",
  ]
    .filter(Boolean)
    .join("\n    ");
}

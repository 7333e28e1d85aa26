import type { FastifyInstance, FastifyRequest } from "fastify";
import { ConfigError, ForbiddenError, StewardError, type Parser } from "@steward/platform";

/**
 * The names this gateway answers to (docs/security.md): host names a request's `Host` may carry, whatever its port,
 * and the origins a browser's `Origin` may name besides those hosts' own. A page that rebinds its own DNS name to
 * the gateway's address still sends its name in both, and is refused before any route.
 */
export interface ServedNames {
  readonly hosts: ReadonlySet<string>;
  readonly origins: ReadonlySet<string>;
}

/** The loopback names, which is where a gateway listens unless told otherwise. */
export const LOOPBACK_HOSTS = "localhost,127.0.0.1,::1";

const HOST_NAME = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;
const IPV6 = /^[0-9a-f:.]+$/;

/** A `Host` header's name, lowercased and without its port (`[::1]:8080` → `::1`); null when it names none. */
export function hostNameOf(header: string): string | null {
  const value = header.trim().toLowerCase();
  if (value.startsWith("[")) {
    const end = value.indexOf("]");
    const name = end > 0 ? value.slice(1, end) : "";
    const rest = end > 0 ? value.slice(end + 1) : "x";
    return IPV6.test(name) && /^(?::\d{1,5})?$/.test(rest) ? name : null;
  }
  const [name, port, extra] = value.split(":");
  if (extra !== undefined || (port !== undefined && !/^\d{1,5}$/.test(port))) return null;
  return HOST_NAME.test(name) ? name : null;
}

/** A comma-separated list of host names (no scheme, no port; an IPv6 address bare). */
export const hostNames =
  (fallback: string): Parser<ReadonlySet<string>> =>
  (raw, name) => {
    const entries = (raw === undefined || raw.trim() === "" ? fallback : raw).split(",").map((e) => e.trim().toLowerCase());
    for (const entry of entries) {
      if (!(HOST_NAME.test(entry) || (entry.includes(":") && IPV6.test(entry)))) {
        throw new ConfigError(name, `has ${JSON.stringify(entry)}, which is not a host name (no scheme, no port)`);
      }
    }
    return new Set(entries);
  };

/** A comma-separated list of origins (`https://console.example.com`, a port where not the scheme's); may be empty. */
export const originList: Parser<ReadonlySet<string>> = (raw, name) => {
  const entries = (raw ?? "")
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e !== "");
  for (const entry of entries) {
    let origin: string | null = null;
    try {
      const url = new URL(entry);
      if (url.protocol === "http:" || url.protocol === "https:") origin = url.origin;
    } catch {
      origin = null;
    }
    if (origin !== entry.toLowerCase().replace(/\/$/, ""))
      throw new ConfigError(name, `has ${JSON.stringify(entry)}, which is not an origin (scheme://host[:port])`);
  }
  return new Set(entries.map((e) => e.toLowerCase().replace(/\/$/, "")));
};

/** Whether a browser's `Origin` is one the gateway serves: a listed origin, or http(s) on one of its host names. */
export function originServed(origin: string, names: ServedNames): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // "null" (a sandboxed frame, a file) and anything else that is no origin
  }
  if (names.origins.has(url.origin)) return true;
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  return (url.protocol === "http:" || url.protocol === "https:") && names.hosts.has(host);
}

/** The request names a host this gateway does not serve: 421, before any route, token or body is looked at. */
class MisdirectedError extends StewardError {
  constructor() {
    super(421, 10001, "the Host header names no host this gateway serves");
    this.name = "MisdirectedError";
  }
}

/**
 * An `onRequest` hook on every route: the `Host` must name a served host (421 otherwise) and an `Origin`, when a
 * browser sends one, a served origin (403). A request without `Host` is HTTP/1.0 (HTTP/1.1 requires it): no
 * browser sends one.
 */
export function registerHostOriginCheck(app: FastifyInstance, names: ServedNames): void {
  app.addHook("onRequest", async (request: FastifyRequest) => {
    const host = request.headers.host;
    if (host !== undefined) {
      const name = hostNameOf(host);
      if (name === null || !names.hosts.has(name)) throw new MisdirectedError();
    }
    const origin = request.headers.origin;
    if (origin !== undefined && !originServed(origin, names)) throw new ForbiddenError("requests from this origin are refused");
  });
}

import { existsSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply } from "fastify";
import { problemOf } from "../problem";
import { registerDevSignInRoute, type DevSignIn } from "./dev-sign-in";

/** Where the console is served. */
export const CONSOLE_PATH = "/console";

/**
 * The console's policy: its own bundled files only, no inline script or style, the API on this origin only,
 * never framed. The token travels in an Authorization header, never in a URL (so never in a Referer either).
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

export interface ConsoleRoutesDeps {
  /** The built console (its index.html and assets/); default the @steward/console package's dist, if built. */
  readonly consoleDir?: string | null;
  /** Development sign-in, decided at boot (devSignInFrom); off when absent. */
  readonly devSignIn?: DevSignIn | null;
}

/** The built console of the workspace, or null when it is not installed or not built. */
export function defaultConsoleDir(): string | null {
  try {
    const dir = join(dirname(require.resolve("@steward/console/package.json")), "dist");
    return existsSync(join(dir, "index.html")) ? dir : null;
  } catch {
    return null;
  }
}

const isHashedAsset = (path: string) => path.includes(`${sep}assets${sep}`);

function securityHeaders(reply: { setHeader(name: string, value: string): unknown }): void {
  reply.setHeader("content-security-policy", CONSOLE_CSP);
  reply.setHeader("x-content-type-options", "nosniff");
  reply.setHeader("referrer-policy", "no-referrer");
  reply.setHeader("x-frame-options", "DENY");
}

/**
 * The web console at /console/ (docs/console.md): static files only, public (it signs in to the REST API like
 * any client), counted like any request without a token. index.html is revalidated on every load; the
 * hash-named assets are immutable. Without a build, every console path answers 503 saying how to build it.
 * These routes are not API operations: hidden from the OpenAPI document, as the reference page is.
 */
export function registerConsoleRoutes(app: FastifyInstance, deps: ConsoleRoutesDeps): void {
  registerDevSignInRoute(app, deps.devSignIn ?? null);
  const root = deps.consoleDir === undefined ? defaultConsoleDir() : deps.consoleDir;
  const hidden = { schema: { hide: true } };
  app.get(CONSOLE_PATH, hidden, async (_request, reply) => reply.redirect(`${CONSOLE_PATH}/`, 301));
  if (!root) {
    const notBuilt = async (_request: unknown, reply: FastifyReply) => {
      securityHeaders(reply.raw);
      return reply
        .status(503)
        .type("application/problem+json")
        .header("cache-control", "no-store")
        .send(problemOf(503, 10503, "the web console is not built: run `npm run build` (it builds apps/console)"));
    };
    app.get(`${CONSOLE_PATH}/`, hidden, notBuilt);
    app.get(`${CONSOLE_PATH}/*`, hidden, notBuilt);
    return;
  }
  void app.register(fastifyStatic, {
    root,
    prefix: `${CONSOLE_PATH}/`,
    schemaHide: true,
    decorateReply: false,
    index: ["index.html"],
    cacheControl: false,
    etag: true,
    lastModified: false,
    dotfiles: "deny",
    setHeaders: (res, path) => {
      securityHeaders(res);
      res.setHeader("cache-control", isHashedAsset(path) ? "public, max-age=31536000, immutable" : "no-cache");
    },
  });
}

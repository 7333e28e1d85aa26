import type { FastifyInstance, FastifyRequest } from "fastify";
import { RateLimitedError } from "@steward/platform";
import type { Authenticate } from "../auth";
import { addressKeyOf, bucketsOf, type Caller, type RateLimits } from "./rate-limits";
import type { SharedAllowance } from "./shared-allowance";

export interface RateLimitDeps {
  readonly limits: RateLimits;
  readonly allowance: SharedAllowance;
}

/** Probes of an orchestrator: never limited, they must see the truth however busy the gateway is. */
const UNLIMITED_ROUTES = new Set(["/healthz", "/readyz"]);

/** The route that creates runs, limited on its own besides the per-route limits. */
const RUN_CREATION = { method: "POST", url: "/v1/agents/runs" };

/** Whether one more run may be created by a principal now (a run created inside another request: MCP run_question). */
export type RunCreationAllowance = (caller: {
  tenantId: string;
  userId: string;
}) => Promise<{ admitted: true } | { admitted: false; scope: string; retryAfterSeconds: number }>;

/**
 * The run-creation counters alone (per user and per tenant), drawn by a run that is not created through
 * `POST /v1/agents/runs` (whose request already drew them): an MCP session's runs count like the API's.
 */
export function runCreationAllowance(deps: RateLimitDeps): RunCreationAllowance {
  return async (caller) => {
    const buckets = bucketsOf({ kind: "user", ...caller }, true, deps.limits).slice(2);
    const verdict = await deps.allowance.take(buckets);
    return verdict.admitted ? { admitted: true } : { admitted: false, scope: verdict.scope, retryAfterSeconds: verdict.retryAfterSeconds };
  };
}

/**
 * Limits every route per tenant and per user (and run creation apart), and requests without valid
 * credentials per client address. Decided on arrival, before the body is read and before any route's work,
 * so a refused request (429/10429 with `Retry-After`) has changed nothing.
 */
export function registerRateLimits(app: FastifyInstance, deps: RateLimitDeps & { readonly authenticate: Authenticate }): void {
  /** The token's tenant and user when it verifies (the authenticator remembers it for the route); otherwise the address. */
  async function callerOf(request: FastifyRequest): Promise<Caller> {
    const authorization = request.headers.authorization;
    if (authorization) {
      try {
        const principal = await deps.authenticate(authorization);
        return { kind: "user", tenantId: principal.tenantId, userId: principal.userId };
      } catch {
        // A bad token counts against its address, as no token does; the route answers the 401.
      }
    }
    return { kind: "address", address: addressKeyOf(request.ip) };
  }

  app.addHook("onRequest", async (request) => {
    const route = request.routeOptions.url;
    if (route !== undefined && UNLIMITED_ROUTES.has(route)) return;
    const createsRun = request.method === RUN_CREATION.method && route === RUN_CREATION.url;
    const verdict = await deps.allowance.take(bucketsOf(await callerOf(request), createsRun, deps.limits));
    if (!verdict.admitted) {
      throw new RateLimitedError(`too many requests for ${verdict.scope}; retry after ${verdict.retryAfterSeconds} s`, {
        retryAfterSeconds: verdict.retryAfterSeconds,
      });
    }
  });
}

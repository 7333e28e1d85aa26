import type { FastifyInstance, FastifyRequest } from "fastify";
import type { TSchema } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import type { PolicyPoint } from "@steward/contract";
import { NotFoundError } from "@steward/platform";
import type { Principal } from "../../domain/principal";
import type { Authenticate } from "./auth";
import type { Authorize } from "../../app/authorize";
import type { PendingPermit } from "../../app/gateway-decisions";
import { traceparentOf } from "./trace-context";

/** The policy point a route asks the PDP for, and the resource it names: fixed, or the value of a path parameter. */
export interface RoutePolicy {
  readonly point: PolicyPoint;
  readonly resource: { readonly type: string; readonly id: string } | { readonly type: string; readonly param: string };
  /**
   * The handler writes the permit's record in the statement of the work it permits (`takePermit`): one commit
   * for both. A response that did not take it (a 400 after the guard) has it written before it leaves.
   */
  readonly recordWithWork?: boolean;
  /** Attributes of the decision's context the route sets (the channel of an approval). */
  readonly context?: Readonly<Record<string, string>>;
}

declare module "fastify" {
  interface FastifyContextConfig {
    /** Absent: a public route (probes, the API reference). */
    policy?: RoutePolicy;
    /** The detail of the 404 for a path that cannot name the route's resource. */
    notFound?: string;
    /**
     * The path names the route's resource though the PDP is asked about a fixed one (a thread, asked as the runs'
     * resource): a path that cannot name it is 404 before the token, as when the policy names a path parameter.
     */
    pathNamesResource?: boolean;
  }
  interface FastifyRequest {
    /** Who is calling, set by the route guard on every route that declares a policy. */
    principal: Principal | null;
    /** The permit of a `recordWithWork` route whose record is not written yet (`takePermit`). */
    pendingPermit: PendingPermit | null;
  }
}

export interface RouteGuardDeps {
  readonly authenticate: Authenticate;
  readonly authorize: Authorize;
}

const paramChecks = new WeakMap<object, TypeCheck<TSchema>>();

/** Whether the path parameters fit the route's params schema (compiled once per schema). */
function paramsFit(request: FastifyRequest): boolean {
  const schema = request.routeOptions.schema?.params as TSchema | undefined;
  if (!schema) return true;
  let check = paramChecks.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    paramChecks.set(schema, check);
  }
  return check.Check(request.params);
}

/**
 * The one authentication and authorization of the routes, keyed on each route's `config.policy`: after the body
 * is read (its refusals come first) and before the route's schemas are checked (401 and 403 come before 400).
 * A route whose resource is named by the path answers 404 first when the path cannot name one. The verified
 * principal is put on the request for the handler.
 */
export function registerRouteGuard(app: FastifyInstance, deps: RouteGuardDeps): void {
  app.decorateRequest("principal", null);
  app.decorateRequest("pendingPermit", null);
  app.addHook("preValidation", async (request) => {
    const policy = request.routeOptions.config.policy;
    if (!policy) return;
    let resource: { type: string; id: string };
    const named = "param" in policy.resource || request.routeOptions.config.pathNamesResource === true;
    if (named && !paramsFit(request)) throw new NotFoundError(request.routeOptions.config.notFound);
    if ("param" in policy.resource) {
      resource = { type: policy.resource.type, id: (request.params as Record<string, string>)[policy.resource.param] };
    } else {
      resource = policy.resource;
    }
    const principal = await deps.authenticate(request.headers.authorization);
    const pending = await deps.authorize(principal, policy.point, resource, traceparentOf(request), {
      deferRecord: policy.recordWithWork,
      context: policy.context,
    });
    request.principal = principal;
    request.pendingPermit = pending ?? null;
  });
  // The permit of a response that never reached the work it permits (refused input, say): nothing acted on it,
  // and its record is still written before the answer leaves.
  app.addHook("onSend", async (request, _reply, payload) => {
    const pending = takePermit(request);
    if (pending) await pending.write().catch((err) => request.log.warn({ error_class: (err as Error)?.name }, "a permit's record could not be written"));
    return payload;
  });
}

/**
 * The permit of a `recordWithWork` route, taken by the handler that writes its record: in the statement of the
 * work it permits, or alone (`write`) before anything acts on it. Null when there is none (already taken, or
 * decided by the policy service, which wrote it).
 */
export function takePermit(request: FastifyRequest): PendingPermit | null {
  const pending = request.pendingPermit;
  request.pendingPermit = null;
  return pending;
}

/** The principal the guard verified; a route without a policy has none (a wiring mistake, answered 500). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error(`route ${request.routeOptions.url} has no policy: no principal`);
  return request.principal;
}

/** A route's policy over a fixed resource: `{type: "resource", id}` (the point itself unless named). */
export const resourcePolicy = (point: PolicyPoint, id: string = point): RoutePolicy => ({ point, resource: { type: "resource", id } });

import { RateLimitedError, UnavailableError } from "@steward/platform";
import { createTally } from "../../domain/tally";

/** How many event streams (SSE) a gateway holds open: per user, per tenant (its share), and in all. */
export interface StreamLimits {
  readonly perUser: number;
  readonly perTenant: number;
  readonly max: number;
}

/** Defaults of the bounds (GATEWAY_SSE_STREAMS_* in config.ts). */
export const STREAM_LIMIT_DEFAULTS: StreamLimits = { perUser: 32, perTenant: 1_000, max: 10_000 };

type Caller = { readonly tenantId: string; readonly userId: string };

/**
 * The held follows of runs on this gateway — open event streams, and MCP calls waiting for their run — counted per
 * user and per tenant: a caller past its user's or its tenant's share is refused (429) while others still open
 * theirs, and the gateway past its bound refuses everyone (503). `take` answers the release of the slot it took,
 * which may be called more than once; `tryTake` answers null instead of refusing.
 */
export function createStreamSlots(limits: StreamLimits) {
  const byTenant = createTally();
  const byUser = createTally();
  let open = 0;
  const userKey = (caller: Caller) => JSON.stringify([caller.tenantId, caller.userId]);

  /** Whose share is full, if any. */
  function full(caller: Caller): "user" | "tenant" | "gateway" | null {
    if (byUser.of(userKey(caller)) >= limits.perUser) return "user";
    if (byTenant.of(caller.tenantId) >= limits.perTenant) return "tenant";
    return open >= limits.max ? "gateway" : null;
  }

  function hold(caller: Caller): () => void {
    const user = userKey(caller);
    open += 1;
    byUser.add(user, 1);
    byTenant.add(caller.tenantId, 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      open -= 1;
      byUser.add(user, -1);
      byTenant.add(caller.tenantId, -1);
    };
  }

  return {
    take(caller: Caller): () => void {
      const refused = full(caller);
      if (refused === "user") {
        throw new RateLimitedError(`you hold ${limits.perUser} open event streams on this gateway; close one first`, { retryAfterSeconds: 5 });
      }
      if (refused === "tenant") {
        throw new RateLimitedError("your tenant holds as many open event streams on this gateway as it may; close one first", { retryAfterSeconds: 5 });
      }
      if (refused === "gateway") throw new UnavailableError("this gateway holds as many open event streams as it may; try again later");
      return hold(caller);
    },
    tryTake: (caller: Caller): (() => void) | null => (full(caller) === null ? hold(caller) : null),
    /** Open streams in all. */
    size: () => open,
  };
}

export type StreamSlots = ReturnType<typeof createStreamSlots>;

import type { Logger, Pool } from "@steward/platform";
import { leaseRequests, sweepRateLimitBuckets } from "@steward/store";
import { rateLimitsWithDefaults, type RateLimitOptions } from "./rate-limits";
import type { RateLimitDeps } from "./register";
import { createSharedAllowance } from "./shared-allowance";

/** Buckets quiet for this long are deleted from the shared table (s). */
const QUIET_BUCKET_SECONDS = 3600;
const SWEEP_EVERY_MS = 5 * 60 * 1000;

/** The rate limits over PostgreSQL's shared counters, and a sweep of buckets gone quiet; `stop` ends the sweep. */
export function createRateLimits(pool: Pool, logger: Logger, options: RateLimitOptions): { deps: RateLimitDeps; stop(): void } {
  const limits = rateLimitsWithDefaults(options);
  const allowance = createSharedAllowance((windowSeconds, wants) => leaseRequests(pool, windowSeconds, wants), logger, {
    windowSeconds: limits.windowSeconds,
  });
  const sweep = setInterval(() => {
    sweepRateLimitBuckets(pool, Math.max(QUIET_BUCKET_SECONDS, 2 * limits.windowSeconds)).catch((err: unknown) =>
      logger.warn({ error_class: (err as Error)?.name }, "rate limits: sweeping quiet buckets failed"),
    );
  }, SWEEP_EVERY_MS);
  sweep.unref();
  return { deps: { limits, allowance }, stop: () => clearInterval(sweep) };
}

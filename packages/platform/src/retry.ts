import type { Logger } from "pino";

export interface RetryOptions {
  /** What is awaited, for the log ("PostgreSQL", "tool-exec"). */
  what: string;
  logger: Logger;
  /** First wait after a failure, in ms. Default 250. */
  initialDelayMs?: number;
  /** Longest wait between attempts, in ms. Default 5000. */
  maxDelayMs?: number;
  /** Stops retrying (the promise rejects with the last error). */
  signal?: AbortSignal;
}

/** The wait after the `n`-th failure in a row (from 1): `initialMs`, doubling each time, never above `maxMs`. */
export function cappedBackoffMs(n: number, initialMs: number, maxMs: number): number {
  return Math.min(maxMs, initialMs * 2 ** Math.min(n - 1, 16));
}

/**
 * Calls `attempt` until it succeeds, waiting a capped, growing delay between tries and saying what it waits
 * for (once at warn, then every tenth try). For start-up: a dependency that is not up yet is waited for,
 * never a reason to exit.
 */
export async function retryUntilUp<T>(attempt: () => Promise<T>, options: RetryOptions): Promise<T> {
  const initial = options.initialDelayMs ?? 250;
  const max = options.maxDelayMs ?? 5000;
  for (let n = 1; ; n++) {
    try {
      const value = await attempt();
      if (n > 1) options.logger.info({ attempts: n }, `${options.what} is up`);
      return value;
    } catch (err) {
      if (options.signal?.aborted) throw err;
      const delay = cappedBackoffMs(n, initial, max);
      if (n === 1 || n % 10 === 0) {
        options.logger.warn(
          { attempt: n, retry_in_ms: delay, error_class: (err as Error)?.name, code: (err as { code?: unknown })?.code },
          `waiting for ${options.what}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        options.signal?.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
      });
    }
  }
}

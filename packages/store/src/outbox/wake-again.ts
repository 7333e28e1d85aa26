import { cappedBackoffMs } from "@steward/platform";

/**
 * When a relay wakes again without a notification: a row due again soon (one no stream answered for, one NATS
 * refused), or after a drain that failed (the bus or PostgreSQL not answering), rather than at its next sweep.
 * The earliest wake-up asked for wins; failed drains in a row wait twice as long each time, up to `maxMs`.
 */
export interface WakeAgain {
  /** Wakes in `ms`, unless an earlier wake-up is already set. */
  after(ms: number): void;
  /** A drain failed: wakes after the streak's pause; returns how many failed in a row, this one included. */
  failed(): number;
  /** A drain went through: the streak ends. */
  succeeded(): void;
  /** No more wake-ups. */
  stop(): void;
}

export function wakeAgain(wake: () => void, options: { readonly firstMs?: number; readonly maxMs: number }): WakeAgain {
  const firstMs = options.firstMs ?? 250;
  let timer: NodeJS.Timeout | null = null;
  let at = Number.POSITIVE_INFINITY;
  let streak = 0;
  let stopped = false;
  const after = (ms: number) => {
    if (stopped) return;
    const when = Date.now() + ms;
    if (timer && when >= at) return;
    if (timer) clearTimeout(timer);
    at = when;
    timer = setTimeout(() => {
      timer = null;
      at = Number.POSITIVE_INFINITY;
      wake();
    }, ms);
    timer.unref();
  };
  return {
    after,
    failed() {
      after(cappedBackoffMs(++streak, firstMs, options.maxMs));
      return streak;
    },
    succeeded() {
      streak = 0;
    },
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}

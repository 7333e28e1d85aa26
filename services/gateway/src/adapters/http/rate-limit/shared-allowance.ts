import type { Logger } from "@steward/platform";
import type { BucketSpec } from "./rate-limits";

/** The shared counter (PostgreSQL's `leaseRequests`): grants part of each bucket's current window. */
export type LeaseBuckets = (
  windowSeconds: number,
  wants: ReadonlyArray<{ bucket: string; capacity: number; want: number }>,
) => Promise<ReadonlyArray<{ bucket: string; granted: number; leased: number; capacity: number; windowStartMs: number; windowEndsInMs: number }>>;

export type Verdict = { readonly admitted: true } | { readonly admitted: false; readonly scope: string; readonly retryAfterSeconds: number };

export interface SharedAllowance {
  /** Takes one request from every bucket, or from none: admitted, or refused with the seconds to wait. */
  take(buckets: readonly BucketSpec[]): Promise<Verdict>;
}

export interface SharedAllowanceOptions {
  readonly windowSeconds: number;
  /** Largest lease taken at once. Default 100. */
  readonly maxLease?: number;
  /** While the shared counter cannot be reached, each bucket admits up to one lease per this many ms. Default 1000. */
  readonly fallbackMs?: number;
  /** The clock, in ms (tests). */
  readonly now?: () => number;
}

/** What this replica holds of a bucket's current window. */
interface Held {
  allowance: number;
  /** Leased by all replicas, as last seen. */
  leased: number;
  capacity: number;
  window: number;
  /** When the window ends, on this replica's clock. */
  endsAt: number;
  /** Every request of the window is leased: refuse until it ends. */
  spent: boolean;
}

/** The window of what a replica admits on its own while the shared counter is unreachable. */
const FALLBACK = -1;
/** Rounds of leasing a request may go through before it is let in anyway (only under heavy contention). */
const MAX_ROUNDS = 4;
/** Each lease takes this share of what is left of the window, so that the last requests are leased one by one. */
const LEASE_SHARE = 1 / 16;

/**
 * A local allowance over shared counters. A request is decided in memory while this replica holds leased
 * requests of each of its buckets; when one runs dry, one statement leases more for every bucket waiting at
 * that moment (the requests of one tick share it). A spent window is known locally until it ends, so a flood
 * costs the database one statement per bucket and window. Leases are small near the limit, so the replicas
 * together never admit more than a window's capacity, and leave unused at most a few leases' worth. When the
 * shared counter cannot be reached, each replica admits a bounded trickle on its own (fails soft, not open).
 */
export function createSharedAllowance(lease: LeaseBuckets, logger: Logger, options: SharedAllowanceOptions): SharedAllowance {
  const now = options.now ?? Date.now;
  const maxLease = options.maxLease ?? 100;
  const fallbackMs = options.fallbackMs ?? 1000;
  const held = new Map<string, Held>();
  const inFlight = new Map<string, Promise<void>>();
  let pending: { wants: Map<string, { capacity: number; demand: number }>; done: Promise<void> } | null = null;
  let lastWarning = -Infinity;
  let lastSweep = now();

  const current = (bucket: string, at: number) => {
    const h = held.get(bucket);
    return h && h.endsAt > at ? h : undefined;
  };

  function leaseSize(bucket: string, capacity: number, demand: number): number {
    const h = current(bucket, now());
    const left = Math.max(0, capacity - (h ? h.leased : 0));
    return Math.min(capacity, Math.max(demand, Math.min(maxLease, Math.floor(left * LEASE_SHARE))));
  }

  async function flush(wants: Map<string, { capacity: number; demand: number }>): Promise<void> {
    const asks = [...wants].map(([bucket, w]) => ({ bucket, capacity: w.capacity, want: leaseSize(bucket, w.capacity, w.demand) }));
    try {
      const grants = await lease(options.windowSeconds, asks);
      const at = now();
      for (const g of grants) {
        const before = current(g.bucket, at);
        const carried = before && before.window === g.windowStartMs ? before.allowance : 0;
        held.set(g.bucket, {
          allowance: carried + g.granted,
          leased: g.leased,
          capacity: g.capacity,
          window: g.windowStartMs,
          endsAt: at + g.windowEndsInMs,
          spent: g.leased >= g.capacity,
        });
      }
    } catch (err) {
      const at = now();
      if (at - lastWarning > 10_000) {
        lastWarning = at;
        logger.warn(
          { error_class: (err as Error)?.name, code: (err as { code?: string })?.code },
          "rate limits: the shared counter is unreachable; each replica admits a bounded share on its own",
        );
      }
      for (const a of asks) {
        const before = current(a.bucket, at);
        // One lease's worth per fallback period: the trickle used up, the bucket refuses until the period ends.
        if (before && before.window === FALLBACK) before.spent = true;
        else
          held.set(a.bucket, {
            allowance: (before?.allowance ?? 0) + a.want,
            leased: before?.leased ?? 0,
            capacity: a.capacity,
            window: FALLBACK,
            endsAt: at + fallbackMs,
            spent: false,
          });
      }
    }
  }

  /** Leases more of `buckets`: joins the lease in flight for a bucket, or the one that leaves at the end of this tick. */
  function refill(buckets: readonly BucketSpec[]): Promise<unknown> {
    const waits: Array<Promise<void>> = [];
    for (const b of buckets) {
      const flying = inFlight.get(b.bucket);
      if (flying) {
        waits.push(flying);
        continue;
      }
      if (!pending) {
        const wants = new Map<string, { capacity: number; demand: number }>();
        const done = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
          pending = null;
          const leasing = flush(wants);
          for (const bucket of wants.keys()) inFlight.set(bucket, leasing);
          try {
            await leasing;
          } finally {
            for (const bucket of wants.keys()) if (inFlight.get(bucket) === leasing) inFlight.delete(bucket);
          }
        });
        pending = { wants, done };
      }
      const w = pending.wants.get(b.bucket) ?? { capacity: b.capacity, demand: 0 };
      w.demand += 1;
      pending.wants.set(b.bucket, w);
      waits.push(pending.done);
    }
    return Promise.all(waits);
  }

  function sweep(at: number): void {
    if (at - lastSweep < 10_000) return;
    lastSweep = at;
    for (const [bucket, h] of held) if (h.endsAt <= at) held.delete(bucket);
  }

  return {
    async take(buckets) {
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const at = now();
        sweep(at);
        let refusal: Verdict | null = null;
        const dry: BucketSpec[] = [];
        for (const b of buckets) {
          const h = current(b.bucket, at);
          if (h && h.allowance > 0) continue;
          if (h && h.spent) {
            const retryAfterSeconds = Math.max(1, Math.ceil((h.endsAt - at) / 1000));
            if (!refusal || (refusal.admitted === false && retryAfterSeconds > refusal.retryAfterSeconds))
              refusal = { admitted: false, scope: b.scope, retryAfterSeconds };
            continue;
          }
          dry.push(b);
        }
        if (refusal) return refusal;
        if (dry.length === 0) {
          for (const b of buckets) held.get(b.bucket)!.allowance -= 1;
          return { admitted: true };
        }
        await refill(dry);
      }
      // Leased and taken by others round after round: rare; a request too many is better than a wrong 429.
      return { admitted: true };
    },
  };
}

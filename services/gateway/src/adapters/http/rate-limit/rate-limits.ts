import { createHash } from "node:crypto";

/** Requests allowed per window, per caller; every field optional, the defaults as documented (docs/api.md). */
export interface RateLimitOptions {
  /** Length of a window, in seconds; a bucket's window starts with its first request after the last one ended. Default 60. */
  readonly windowSeconds?: number;
  /** Requests of one user, any route, per window. Default 6000 (100 a second). */
  readonly perUser?: number;
  /** Requests of one tenant, all its users together, any route, per window. Default 30000. */
  readonly perTenant?: number;
  /** Runs one user may create (POST /v1/agents/runs) per window. Default 600. */
  readonly runsPerUser?: number;
  /** Runs one tenant may create per window. Default 3000. */
  readonly runsPerTenant?: number;
  /** Requests without valid credentials from one client address (an IPv6 client: its /64) per window. Default 600. */
  readonly perAddress?: number;
}

export type RateLimits = Required<RateLimitOptions>;

export function rateLimitsWithDefaults(options: RateLimitOptions = {}): RateLimits {
  return {
    windowSeconds: options.windowSeconds ?? 60,
    perUser: options.perUser ?? 6000,
    perTenant: options.perTenant ?? 30_000,
    runsPerUser: options.runsPerUser ?? 600,
    runsPerTenant: options.runsPerTenant ?? 3000,
    perAddress: options.perAddress ?? 600,
  };
}

/** Who a request counts against: a verified user of a tenant, or (no valid token) the address it came from. */
export type Caller = { readonly kind: "user"; readonly tenantId: string; readonly userId: string } | { readonly kind: "address"; readonly address: string };

/** One counter a request draws from; `scope` names it in a 429's message. */
export interface BucketSpec {
  readonly bucket: string;
  readonly capacity: number;
  readonly scope: string;
}

/** Keys hashed lately, so that a caller's keys are hashed once, not on each request; emptied when full. */
const hashedKeys = new Map<string, string>();
const HASHED_KEYS_MAX = 10_000;

/** A counter's key: its scope and a hash of the identity, so that the shared table holds no identities. */
function keyOf(scope: string, ...identity: string[]): string {
  const named = JSON.stringify([scope, ...identity]);
  let key = hashedKeys.get(named);
  if (key === undefined) {
    key = `${scope}:${createHash("sha256").update(JSON.stringify(identity)).digest("base64url").slice(0, 22)}`;
    if (hashedKeys.size >= HASHED_KEYS_MAX) hashedKeys.clear();
    hashedKeys.set(named, key);
  }
  return key;
}

/** The address a client is counted by: IPv4 as is, IPv6 by its /64 (one host usually holds a whole /64). */
export function addressKeyOf(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1];
  if (!ip.includes(":")) return ip;
  const [head, tail = ""] = ip.split("::");
  const left = head ? head.split(":") : [];
  const right = ip.includes("::") && tail ? tail.split(":") : [];
  const groups = ip.includes("::") ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => (parseInt(g, 16) || 0).toString(16))
    .join(":")}::/64`;
}

/** The counters a request draws from: every one must have room, or the request is refused. */
export function bucketsOf(caller: Caller, createsRun: boolean, limits: RateLimits): BucketSpec[] {
  if (caller.kind === "address") return [{ bucket: keyOf("address", caller.address), capacity: limits.perAddress, scope: "this client address" }];
  const buckets: BucketSpec[] = [
    { bucket: keyOf("user", caller.tenantId, caller.userId), capacity: limits.perUser, scope: "this user" },
    { bucket: keyOf("tenant", caller.tenantId), capacity: limits.perTenant, scope: "this tenant" },
  ];
  if (createsRun) {
    buckets.push(
      { bucket: keyOf("user-runs", caller.tenantId, caller.userId), capacity: limits.runsPerUser, scope: "runs created by this user" },
      { bucket: keyOf("tenant-runs", caller.tenantId), capacity: limits.runsPerTenant, scope: "runs created in this tenant" },
    );
  }
  return buckets;
}

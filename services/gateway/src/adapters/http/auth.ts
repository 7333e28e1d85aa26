import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from "jose";
import { UnauthenticatedError } from "@steward/platform";
import type { Principal } from "../../domain/principal";
import { findInvalidText } from "./valid-text";

export interface AuthOptions {
  /** HS256 shared secret (development, or deployments without an identity provider). */
  readonly secret?: string;
  /** A JWKS endpoint of an identity provider (RS256/ES256 and friends). */
  readonly jwksUrl?: string;
  /** Required `iss` when set (checked in every environment). */
  readonly issuer?: string;
  /** Required `aud` when set (checked in every environment). */
  readonly audience?: string;
  /** Longest accepted lifetime in seconds: `exp - iat`, or `exp - now` without `iat`. Default 86 400 (24 h). */
  readonly maxTtlSeconds?: number;
  /** How long a verified token is remembered, in ms, and never past its `exp`; 0 remembers none. Default 60 000. */
  readonly rememberMs?: number;
  /** Most verified tokens remembered at once; the oldest is forgotten first. Default 10 000. */
  readonly rememberTokens?: number;
}

export type Authenticate = (authorization: string | undefined) => Promise<Principal>;

/** Longer tokens are verified at every request, never remembered (bounds what remembering holds). */
const LONGEST_REMEMBERED = 4096;

/**
 * Verifies `Authorization: Bearer <JWT>`: signature, a required `exp` within the maximum lifetime, and
 * issuer/audience when configured. Claims: `sub` (the user), `tid` (the tenant), `roles` (strings). Every
 * failure is the same 401; neither the token nor the key ever reaches the error.
 *
 * A verified token is remembered (the exact token text) for `rememberMs`, never past its `exp`: a request is
 * verified once although both the rate limits and its route ask, and a client's next requests with the same
 * token cost a lookup. Every check passed stays passed until `exp` (the lifetime bound only tightens as time
 * goes by); only a key withdrawn from a JWKS is noticed up to `rememberMs` later, well within the key set's
 * own cache. Refusals are never remembered.
 */
export function createAuthenticator(options: AuthOptions): Authenticate {
  const key: Uint8Array | JWTVerifyGetKey = options.jwksUrl ? createRemoteJWKSet(new URL(options.jwksUrl)) : new TextEncoder().encode(options.secret ?? "");
  if (!options.jwksUrl && !options.secret) throw new RangeError("an authenticator needs a secret or a JWKS URL");
  const maxTtlSeconds = options.maxTtlSeconds ?? 86_400;
  const rememberMs = options.rememberMs ?? 60_000;
  const rememberTokens = options.rememberTokens ?? 10_000;
  const remembered = new Map<string, { readonly principal: Principal; readonly until: number }>();
  return async function authenticate(authorization) {
    const match = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/.exec(authorization ?? "");
    if (!match) throw new UnauthenticatedError();
    const token = match[1];
    const at = Date.now();
    const known = remembered.get(token);
    if (known) {
      if (at < known.until) return known.principal;
      remembered.delete(token);
    }
    let payload: Record<string, unknown>;
    try {
      const verified = await jwtVerify(token, key as Uint8Array, {
        issuer: options.issuer,
        audience: options.audience,
        algorithms: options.jwksUrl ? undefined : ["HS256"],
        requiredClaims: ["exp"],
      });
      payload = verified.payload as Record<string, unknown>;
    } catch (err) {
      throw new UnauthenticatedError(undefined, { cause: err });
    }
    if (!withinLifetime(payload, maxTtlSeconds)) throw new UnauthenticatedError();
    const { sub, tid, roles } = payload;
    if (typeof sub !== "string" || !sub || typeof tid !== "string" || !tid) throw new UnauthenticatedError();
    if (roles !== undefined && !(Array.isArray(roles) && roles.every((r) => typeof r === "string"))) {
      throw new UnauthenticatedError();
    }
    // Identities are stored and compared as text: one PostgreSQL cannot hold is not an identity.
    if (findInvalidText([sub, tid, roles ?? []]) !== null) throw new UnauthenticatedError();
    const principal: Principal = Object.freeze({ tenantId: tid, userId: sub, roles: Object.freeze([...((roles as string[] | undefined) ?? [])]) });
    if (rememberMs > 0 && rememberTokens > 0 && token.length <= LONGEST_REMEMBERED) {
      if (remembered.size >= rememberTokens) remembered.delete(remembered.keys().next().value as string);
      remembered.set(token, { principal, until: Math.min(at + rememberMs, (payload.exp as number) * 1000) });
    }
    return principal;
  };
}

/**
 * A token may not outlive the configured maximum, whatever its issuer chose. The lifetime counts from `iat`,
 * or from now when `iat` is missing or in the future (a future `iat` must not stretch the window).
 */
function withinLifetime(payload: Record<string, unknown>, maxTtlSeconds: number): boolean {
  const { exp, iat } = payload;
  if (typeof exp !== "number") return false;
  const now = Math.floor(Date.now() / 1000);
  const from = typeof iat === "number" ? Math.min(iat, now) : now;
  return exp - from <= maxTtlSeconds;
}

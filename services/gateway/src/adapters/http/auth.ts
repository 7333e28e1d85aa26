import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from "jose";
import { UnauthenticatedError } from "@steward/platform";

/** Who is calling, from a verified bearer token. */
export interface Principal {
  readonly tenantId: string;
  readonly userId: string;
  readonly roles: readonly string[];
}

export interface AuthOptions {
  /** HS256 shared secret (development, or deployments without an identity provider). */
  readonly secret?: string;
  /** A JWKS endpoint of an identity provider (RS256/ES256 and friends). */
  readonly jwksUrl?: string;
  readonly issuer?: string;
  readonly audience?: string;
}

export type Authenticate = (authorization: string | undefined) => Promise<Principal>;

/**
 * Verifies `Authorization: Bearer <JWT>`: signature, expiry, and issuer/audience when configured. Claims:
 * `sub` (the user), `tid` (the tenant), `roles` (strings). Every failure is the same 401.
 */
export function createAuthenticator(options: AuthOptions): Authenticate {
  const key: Uint8Array | JWTVerifyGetKey = options.jwksUrl
    ? createRemoteJWKSet(new URL(options.jwksUrl))
    : new TextEncoder().encode(options.secret ?? "");
  if (!options.jwksUrl && !options.secret) throw new RangeError("an authenticator needs a secret or a JWKS URL");
  return async function authenticate(authorization) {
    const match = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/.exec(authorization ?? "");
    if (!match) throw new UnauthenticatedError();
    let payload: Record<string, unknown>;
    try {
      const verified = await jwtVerify(match[1], key as Uint8Array, {
        issuer: options.issuer,
        audience: options.audience,
        algorithms: options.jwksUrl ? undefined : ["HS256"],
      });
      payload = verified.payload as Record<string, unknown>;
    } catch (err) {
      throw new UnauthenticatedError(undefined, { cause: err });
    }
    const { sub, tid, roles } = payload;
    if (typeof sub !== "string" || !sub || typeof tid !== "string" || !tid) throw new UnauthenticatedError();
    if (roles !== undefined && !(Array.isArray(roles) && roles.every((r) => typeof r === "string"))) {
      throw new UnauthenticatedError();
    }
    return { tenantId: tid, userId: sub, roles: (roles as string[] | undefined) ?? [] };
  };
}

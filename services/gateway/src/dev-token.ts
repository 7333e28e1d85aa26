import { SignJWT } from "jose";

/** Claims of a development token: the tenant, the user and the roles (default: member). */
export interface DevTokenClaims {
  readonly tenant: string;
  readonly user: string;
  readonly roles?: readonly string[];
  /** Lifetime, e.g. "12h". Default 12 hours. */
  readonly expiresIn?: string;
}

/** Signs an HS256 token the gateway accepts with the same secret (`npm run token`, the start command, tests). */
export function mintDevelopmentToken(secret: string, claims: DevTokenClaims): Promise<string> {
  return new SignJWT({ tid: claims.tenant, roles: [...(claims.roles ?? ["member"])] })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(claims.user)
    .setIssuedAt()
    .setExpirationTime(claims.expiresIn ?? "12h")
    .sign(new TextEncoder().encode(secret));
}

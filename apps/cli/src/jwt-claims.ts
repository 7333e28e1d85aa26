/** The claims a token says it carries (decoded, not verified: for showing who is logged in, never for trust). */
export interface ShownClaims {
  readonly tenant?: string;
  readonly user?: string;
  readonly roles?: readonly string[];
  /** Expiry, ISO-8601. */
  readonly expires_at?: string;
}

/** True when `token` has the shape of a JWT (three base64url parts). */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

export function claimsOf(token: string): ShownClaims {
  try {
    const payload = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8")) as Record<string, unknown>;
    return {
      ...(typeof payload.tid === "string" ? { tenant: payload.tid } : {}),
      ...(typeof payload.sub === "string" ? { user: payload.sub } : {}),
      ...(Array.isArray(payload.roles) ? { roles: payload.roles.map(String) } : {}),
      ...(typeof payload.exp === "number" ? { expires_at: new Date(payload.exp * 1000).toISOString() } : {}),
    };
  } catch {
    return {};
  }
}

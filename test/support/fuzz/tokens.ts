import { SignJWT, type JWTPayload } from "jose";

/** Who a request speaks for, as the gateway must see it: tenant and user. */
export interface Who {
  readonly tenant: string;
  readonly user: string;
}

/**
 * One `Authorization` header the fuzz sends. `expect` says what the gateway must do with it: `accept` (the
 * request speaks for `who`), `refuse` (401 wherever a route authenticates), or `either` (a token within the
 * rules whose outcome the test does not prescribe; when accepted it speaks for `who`).
 */
export interface FuzzToken {
  readonly label: string;
  readonly header: string | undefined;
  readonly expect: "accept" | "refuse" | "either";
  readonly who?: Who;
}

export interface TokenKeys {
  readonly secret: string;
  readonly issuer: string;
  readonly audience: string;
}

/** The principals whose runs the fuzz seeds; `admin` holds the tenant's admin role, the others `member`. */
export const CORE_PRINCIPALS = [
  { tenant: "acme", user: "alice", roles: ["member"] },
  { tenant: "acme", user: "amy", roles: ["member"] },
  { tenant: "acme", user: "ada", roles: ["admin"] },
  { tenant: "beta", user: "bea", roles: ["member"] },
  { tenant: "beta", user: "ben", roles: ["member"] },
  { tenant: "beta", user: "bert", roles: ["admin"] },
] as const;

const b64 = (value: unknown) => Buffer.from(typeof value === "string" ? value : JSON.stringify(value)).toString("base64url");

/** Every token variant the fuzz draws from: the principals' own, the same claims bent every way, and forgeries. */
export async function fuzzTokens(keys: TokenKeys): Promise<FuzzToken[]> {
  const key = new TextEncoder().encode(keys.secret);
  const now = Math.floor(Date.now() / 1000);
  const sign = (claims: JWTPayload, options: { alg?: string; key?: Uint8Array; typ?: string } = {}) => {
    const all: JWTPayload = { iss: keys.issuer, aud: keys.audience, iat: now, exp: now + 3600, ...claims };
    const defined = Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined));
    return new SignJWT(defined).setProtectedHeader({ alg: options.alg ?? "HS256", typ: options.typ }).sign(options.key ?? key);
  };
  const bearer = (token: string) => `Bearer ${token}`;
  const tokens: FuzzToken[] = [];
  const accept = async (label: string, who: Who, claims: JWTPayload = {}) =>
    tokens.push({ label, header: bearer(await sign({ tid: who.tenant, sub: who.user, roles: ["member"], ...claims })), expect: "accept", who });
  const refuse = (label: string, header: string | undefined) => tokens.push({ label, header, expect: "refuse" });

  for (const p of CORE_PRINCIPALS) await accept(`${p.tenant}/${p.user}`, p, { roles: [...p.roles] });
  const alice = { tenant: "acme", user: "alice" };
  await accept("acme/alice claiming admin", alice, { roles: ["admin"] });
  await accept("acme/alice without roles", alice, { roles: undefined });
  await accept("acme/alice with empty roles", alice, { roles: [] });
  await accept("acme/alice with many roles", alice, { roles: ["member", "admin", "root", "policy.admin", ...Array.from({ length: 200 }, (_, i) => `r${i}`)] });
  const misleading = { tenant: "beta", tenant_id: "beta", user: "bea", user_id: "bea", org: "beta" };
  await accept("acme/amy with misleading claims", { tenant: "acme", user: "amy" }, misleading);
  await accept("acme/ada claiming member only", { tenant: "acme", user: "ada" }, { roles: ["member"] });
  // HTTP drops white space around a header value: the same token, whatever the client typed.
  const spaced = `${bearer(await sign({ tid: "acme", sub: "alice", roles: ["member"] }))} \t`;
  tokens.push({ label: "acme/alice with trailing white space", header: spaced, expect: "accept", who: alice });
  await accept("beta/alice (alice's name, other tenant)", { tenant: "beta", user: "alice" });
  await accept("acme/bea (bea's name, other tenant)", { tenant: "acme", user: "bea" });
  await accept("acme/mallory, new, claiming admin", { tenant: "acme", user: "mallory" }, { roles: ["admin"] });
  await accept("beta/eve, new, no roles", { tenant: "beta", user: "eve" }, { roles: [] });
  for (const [label, user] of [
    ["acme/<5000-char user>", "u".repeat(5000)],
    ["acme/<unicode user>", "ü😀\u202e"],
  ]) {
    tokens.push({ label, header: bearer(await sign({ tid: "acme", sub: user, roles: ["member"] })), expect: "either", who: { tenant: "acme", user } });
  }

  const aliceToken = await sign({ tid: "acme", sub: "alice", roles: ["member"] });
  const amyToken = await sign({ tid: "acme", sub: "amy", roles: ["member"] });
  const [head, , sig] = aliceToken.split(".");
  refuse("none", undefined);
  refuse("empty", "");
  refuse("scheme only", "Bearer");
  refuse("scheme and space", "Bearer ");
  refuse("lower-case scheme", `bearer ${aliceToken}`);
  refuse("two spaces", `Bearer  ${aliceToken}`);
  refuse("no scheme", aliceToken);
  refuse("Basic", `Basic ${Buffer.from("alice:secret").toString("base64")}`);
  refuse("Token scheme", `Token ${aliceToken}`);
  refuse("two tokens", `Bearer ${aliceToken}, Bearer ${amyToken}`);
  refuse("two segments", "Bearer abc.def");
  refuse("garbage segments", "Bearer a.b.c");
  refuse("huge garbage", `Bearer ${"A".repeat(6000)}.${"B".repeat(10)}.${"C".repeat(10)}`);
  const claims = (more: JWTPayload) => b64({ iss: keys.issuer, aud: keys.audience, iat: now, exp: now + 600, ...more });
  refuse("alg none, empty signature", bearer(`${b64({ alg: "none", typ: "JWT" })}.${claims({ tid: "acme", sub: "alice", roles: ["admin"] })}.`));
  refuse("alg none, any signature", bearer(`${b64({ alg: "none" })}.${claims({ tid: "acme", sub: "alice" })}.x`));
  refuse("alg HS512, right secret", bearer(await sign({ tid: "acme", sub: "alice" }, { alg: "HS512" })));
  refuse("alg RS256 claimed, HMAC signature", bearer(`${b64({ alg: "RS256" })}.${aliceToken.split(".")[1]}.${sig}`));
  refuse("tampered payload", bearer(`${head}.${claims({ tid: "acme", sub: "amy", roles: ["admin"] })}.${sig}`));
  refuse("other tenant spliced into alice's token", bearer(`${head}.${claims({ tid: "beta", sub: "alice", roles: ["member"] })}.${sig}`));
  refuse("wrong secret", bearer(await sign({ tid: "acme", sub: "alice" }, { key: new TextEncoder().encode(`${keys.secret}x`) })));
  refuse("expired", bearer(await sign({ tid: "acme", sub: "alice", iat: now - 7200, exp: now - 3600 })));
  refuse("no exp (issued 2001)", bearer(await sign({ tid: "acme", sub: "alice", iat: 978_307_200, exp: undefined })));
  refuse("lifetime of 30 days", bearer(await sign({ tid: "acme", sub: "alice", exp: now + 30 * 86_400 })));
  refuse("exp as a string", bearer(await sign({ tid: "acme", sub: "alice", exp: String(now + 600) as unknown as number })));
  refuse("not yet valid", bearer(await sign({ tid: "acme", sub: "alice", nbf: now + 3600 })));
  refuse("foreign issuer", bearer(await sign({ tid: "acme", sub: "alice", iss: "https://evil.test" })));
  refuse("no issuer", bearer(await sign({ tid: "acme", sub: "alice", iss: undefined })));
  refuse("foreign audience", bearer(await sign({ tid: "acme", sub: "alice", aud: "someone-else" })));
  refuse("no audience", bearer(await sign({ tid: "acme", sub: "alice", aud: undefined })));
  refuse("no sub", bearer(await sign({ tid: "acme" })));
  refuse("empty sub", bearer(await sign({ tid: "acme", sub: "" })));
  refuse("numeric sub", bearer(await sign({ tid: "acme", sub: 7 as unknown as string })));
  refuse("no tid", bearer(await sign({ sub: "alice" })));
  refuse("numeric tid", bearer(await sign({ tid: 1, sub: "alice" })));
  refuse("roles as a string", bearer(await sign({ tid: "acme", sub: "alice", roles: "admin" })));
  refuse("roles of numbers", bearer(await sign({ tid: "acme", sub: "alice", roles: [1, 2] })));
  refuse("roles as an object", bearer(await sign({ tid: "acme", sub: "alice", roles: { admin: true } })));
  refuse("lone surrogate in sub", bearer(await sign({ tid: "acme", sub: "al\ud800ice" })));
  refuse("NUL in tid", bearer(await sign({ tid: "ac\u0000me", sub: "alice" })));
  refuse("NUL in a role", bearer(await sign({ tid: "acme", sub: "alice", roles: ["member", "adm\u0000in"] })));
  return tokens;
}

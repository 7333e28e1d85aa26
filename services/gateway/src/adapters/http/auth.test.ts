import { SignJWT, type JWTPayload } from "jose";
import { UnauthenticatedError } from "@steward/platform";
import { createAuthenticator, type AuthOptions } from "./auth";

const secret = "s".repeat(40);
const key = new TextEncoder().encode(secret);
const now = () => Math.floor(Date.now() / 1000);

function sign(claims: JWTPayload): Promise<string> {
  return new SignJWT({ tid: "acme", roles: ["member"], sub: "alice", ...claims }).setProtectedHeader({ alg: "HS256" }).sign(key);
}

async function refusal(token: string, options: Partial<AuthOptions> = {}): Promise<UnauthenticatedError> {
  const authenticate = createAuthenticator({ secret, ...options });
  const error = await authenticate(`Bearer ${token}`).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(UnauthenticatedError);
  const refused = error as UnauthenticatedError;
  expect([refused.status, refused.code]).toEqual([401, 10011]);
  // Neither the token nor the key is carried by what a handler could log or answer.
  const told = `${refused.message} ${String((refused.cause as Error | undefined)?.message ?? "")}`;
  expect(told).not.toContain(token);
  expect(told).not.toContain(secret);
  return refused;
}

describe("createAuthenticator", () => {
  it("accepts a token with exp inside the maximum lifetime", async () => {
    const authenticate = createAuthenticator({ secret, maxTtlSeconds: 3600 });
    const token = await sign({ iat: now(), exp: now() + 3600 });
    await expect(authenticate(`Bearer ${token}`)).resolves.toEqual({ tenantId: "acme", userId: "alice", roles: ["member"] });
  });

  it("refuses a token without exp, however old or new", async () => {
    await refusal(await sign({ iat: 978_307_200 })); // issued in 2001, never expires
    await refusal(await sign({ iat: now() }));
  });

  it("refuses a token whose exp - iat exceeds the maximum lifetime (default 24 h)", async () => {
    await refusal(await sign({ iat: now(), exp: now() + 86_400 + 60 }));
    await refusal(await sign({ iat: now(), exp: now() + 7200 }), { maxTtlSeconds: 3600 });
  });

  it("counts from now when iat is missing or in the future", async () => {
    await refusal(await sign({ exp: now() + 2 * 86_400 }));
    await refusal(await sign({ iat: now() + 10 * 86_400, exp: now() + 10 * 86_400 + 60 }));
    const authenticate = createAuthenticator({ secret });
    await expect(authenticate(`Bearer ${await sign({ exp: now() + 600 })}`)).resolves.toMatchObject({ userId: "alice" });
  });

  it("refuses an expired token", async () => {
    await refusal(await sign({ iat: now() - 7200, exp: now() - 3600 }));
  });

  it("checks iss and aud when configured, and refuses a foreign or missing one", async () => {
    const options = { issuer: "https://id.acme.test", audience: "steward" };
    const exp = now() + 600;
    const authenticate = createAuthenticator({ secret, ...options });
    await expect(authenticate(`Bearer ${await sign({ exp, iss: options.issuer, aud: options.audience })}`)).resolves.toMatchObject({
      tenantId: "acme",
    });
    await refusal(await sign({ exp, iss: "https://evil.test", aud: options.audience }), options);
    await refusal(await sign({ exp, iss: options.issuer, aud: "someone-else" }), options);
    await refusal(await sign({ exp }), options);
  });

  it("refuses a token whose identity holds text that cannot be stored", async () => {
    const exp = now() + 600;
    await refusal(await sign({ exp, tid: "acme\u0000" }));
    await refusal(await sign({ exp, sub: "\ud800" }));
    await refusal(await sign({ exp, roles: ["member", "\udfff"] }));
  });

  it("refuses a token signed with another key", async () => {
    const other = await new SignJWT({ tid: "acme" })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("alice")
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode("o".repeat(40)));
    await refusal(other);
  });
});

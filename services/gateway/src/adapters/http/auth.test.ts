import { SignJWT, jwtVerify, type JWTPayload } from "jose";
import { UnauthenticatedError } from "@steward/platform";
import { createAuthenticator, type AuthOptions } from "./auth";

// The real verification, counted: a remembered token must not be verified again.
jest.mock("jose", () => {
  const actual = jest.requireActual("jose");
  return { ...actual, jwtVerify: jest.fn(actual.jwtVerify) };
});
const verifications = jwtVerify as jest.MockedFunction<typeof jwtVerify>;

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
    const issued = now();
    const token = await sign({ iat: issued, exp: issued + 3600 });
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

  describe("remembering verified tokens", () => {
    afterEach(() => jest.useRealTimers());

    it("verifies a token once for all the requests that carry it (the rate limits and the route both ask)", async () => {
      const authenticate = createAuthenticator({ secret });
      const token = await sign({ iat: now(), exp: now() + 600 });
      verifications.mockClear();
      const principals = await Promise.all([1, 2, 3].map(() => authenticate(`Bearer ${token}`)));
      // The first three arrive together: each is verified (nothing was remembered yet).
      expect(verifications).toHaveBeenCalledTimes(3);
      for (let i = 0; i < 5; i++) expect(await authenticate(`Bearer ${token}`)).toEqual(principals[0]);
      expect(verifications).toHaveBeenCalledTimes(3);
      // What a caller gets cannot be changed for the next one.
      expect(Object.isFrozen(principals[0]) && Object.isFrozen(principals[0].roles)).toBe(true);
      // Another token is verified on its own.
      await authenticate(`Bearer ${await sign({ iat: now(), exp: now() + 600, sub: "bob" })}`);
      expect(verifications).toHaveBeenCalledTimes(4);
    });

    it("never remembers a token past its exp, nor longer than rememberMs", async () => {
      jest.useFakeTimers({ now: Date.parse("2030-01-01T00:00:00Z"), doNotFake: ["nextTick", "setImmediate", "queueMicrotask"] });
      const authenticate = createAuthenticator({ secret, rememberMs: 60_000 });
      const shortLived = await sign({ iat: now(), exp: now() + 30 });
      await expect(authenticate(`Bearer ${shortLived}`)).resolves.toMatchObject({ userId: "alice" });
      jest.setSystemTime(Date.now() + 29_000);
      await expect(authenticate(`Bearer ${shortLived}`)).resolves.toMatchObject({ userId: "alice" });
      jest.setSystemTime(Date.now() + 1_000);
      await refusalBy(authenticate, shortLived);

      const longLived = await sign({ iat: now(), exp: now() + 3600 });
      await authenticate(`Bearer ${longLived}`);
      verifications.mockClear();
      jest.setSystemTime(Date.now() + 59_000);
      await authenticate(`Bearer ${longLived}`);
      expect(verifications).not.toHaveBeenCalled();
      jest.setSystemTime(Date.now() + 1_000);
      await authenticate(`Bearer ${longLived}`);
      expect(verifications).toHaveBeenCalledTimes(1);
    });

    it("never remembers a refusal, and remembers nothing with rememberMs 0", async () => {
      const exp = now() + 600;
      const foreign = await sign({ exp, iss: "https://evil.test" });
      const strict = createAuthenticator({ secret, issuer: "https://id.acme.test" });
      await refusalBy(strict, foreign);
      await refusalBy(strict, foreign);
      const forgetful = createAuthenticator({ secret, rememberMs: 0 });
      const token = await sign({ exp });
      verifications.mockClear();
      await forgetful(`Bearer ${token}`);
      await forgetful(`Bearer ${token}`);
      expect(verifications).toHaveBeenCalledTimes(2);
    });

    it("holds at most rememberTokens tokens, forgetting the oldest first", async () => {
      const authenticate = createAuthenticator({ secret, rememberTokens: 2 });
      const exp = now() + 600;
      const [a, b, c] = await Promise.all(["a", "b", "c"].map((sub) => sign({ exp, sub })));
      for (const t of [a, b, c]) await authenticate(`Bearer ${t}`);
      verifications.mockClear();
      await authenticate(`Bearer ${c}`);
      await authenticate(`Bearer ${b}`);
      expect(verifications).not.toHaveBeenCalled();
      await authenticate(`Bearer ${a}`);
      expect(verifications).toHaveBeenCalledTimes(1);
    });
  });
});

async function refusalBy(authenticate: ReturnType<typeof createAuthenticator>, token: string): Promise<void> {
  await expect(authenticate(`Bearer ${token}`)).rejects.toMatchObject({ status: 401, code: 10011 });
}

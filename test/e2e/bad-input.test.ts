import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import pg from "pg";
import { SignJWT, type JWTPayload } from "jose";
import { startTestPlatform, type TestPlatform } from "../support/platform";

jest.setTimeout(120_000);

const secret = randomBytes(32).toString("base64url");
const issuer = "https://id.acme.test";
const audience = "steward-e2e";
const now = () => Math.floor(Date.now() / 1000);

/** A token signed with the gateway's key; every claim may be overridden or left out (undefined). */
function mint(claims: JWTPayload = {}): Promise<string> {
  const all: JWTPayload = { tid: "acme", roles: ["member"], sub: "alice", iss: issuer, aud: audience, iat: now(), exp: now() + 600, ...claims };
  const defined = Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined));
  return new SignJWT(defined).setProtectedHeader({ alg: "HS256" }).sign(new TextEncoder().encode(secret));
}

describe("bad input at the gateway: bodies and tokens get a 4xx with a code, never a 5xx", () => {
  let platform: TestPlatform;
  let pool: pg.Pool;
  let alice: string;

  beforeAll(async () => {
    platform = await startTestPlatform({
      STEWARD_JWT_SECRET: secret,
      STEWARD_JWT_ISSUER: issuer,
      STEWARD_JWT_AUDIENCE: audience,
      STEWARD_JWT_MAX_TTL: "3600",
    });
    pool = new pg.Pool({ connectionString: platform.databaseUrl });
    alice = await mint();
  });

  afterAll(async () => {
    await pool?.end();
    await platform?.teardown();
  });

  const runCount = async () => (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM runs")).rows[0].n;

  it("answers 400/10001 to a lone surrogate or NUL in the body (PostgreSQL once answered 500) and creates nothing", async () => {
    const before = await runCount();
    for (const rawBody of ['{"input":"\\ud800"}', '{"input":"ok","response_language":"\\udfff"}', '{"input":"a\\u0000b"}']) {
      const res = await platform.http("POST", "/v1/agents/runs", { token: alice, rawBody });
      expect([res.status, res.body.code]).toEqual([400, 10001]);
    }
    const res = await platform.http("POST", "/v1/admin/policies/validate", { token: alice, rawBody: '{"policies":"permit(\\ud800"}' });
    expect([res.status, res.body.code]).toEqual([400, 10001]);
    expect(await runCount()).toBe(before);
    // The same request with valid text is accepted: the refusal is the text's.
    const valid = await platform.http("POST", "/v1/agents/runs", { token: alice, rawBody: '{"input":"\\ud83d\\ude00 hello"}' });
    expect(valid.status).toBe(201);
  });

  it("answers 400/10001 to a body nested more than 32 levels deep, on every route, and creates nothing", async () => {
    const before = await runCount();
    const deep = `${"[".repeat(50_000)}${"]".repeat(50_000)}`;
    for (const [path, rawBody] of [
      ["/v1/agents/runs", `{"input":"hi","extra":${deep}}`],
      ["/v1/agents/runs", deep],
      ["/v1/threads", `{"title":${deep}}`],
    ] as const) {
      const res = await platform.http("POST", path, { token: alice, rawBody });
      expect([path, res.status, res.body.code]).toEqual([path, 400, 10001]);
    }
    expect(await runCount()).toBe(before);
  });

  it("answers 413/10413 to a body over the limit and 415/10415 to a wrong content type", async () => {
    const big = await platform.http("POST", "/v1/agents/runs", { token: alice, body: { input: "x".repeat(300 * 1024) } });
    expect([big.status, big.body.code]).toEqual([413, 10413]);
    const text = await platform.http("POST", "/v1/agents/runs", { token: alice, rawBody: '{"input":"hi"}', headers: { "content-type": "text/plain" } });
    expect([text.status, text.body.code]).toEqual([415, 10415]);
    const form = await platform.http("POST", "/v1/agents/runs", {
      token: alice,
      rawBody: "input=hi",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect([form.status, form.body.code]).toEqual([415, 10415]);
    expect(form.headers.get("content-type")).toContain("application/problem+json");
  });

  it("accepts a token with exp, iss and aud as configured", async () => {
    const res = await platform.http("GET", "/v1/agents/runs", { token: alice });
    expect(res.status).toBe(200);
  });

  it.each([
    ["no exp (issued in 2001, never expiring)", { iat: 978_307_200, exp: undefined }],
    ["a lifetime over STEWARD_JWT_MAX_TTL", { exp: now() + 7200 }],
    ["no iat and exp beyond the maximum from now", { iat: undefined, exp: now() + 7200 }],
    ["a foreign issuer", { iss: "https://evil.test" }],
    ["no issuer", { iss: undefined }],
    ["a foreign audience", { aud: "someone-else" }],
    ["no audience", { aud: undefined }],
  ])("refuses a token with %s: 401/10011, with neither token nor secret in the answer or the logs", async (_label, claims) => {
    const token = await mint(claims);
    const res = await platform.http("GET", "/v1/agents/runs", { token });
    expect([res.status, res.body.code]).toEqual([401, 10011]);
    const told = JSON.stringify(res.body) + platform.services.gateway.lines.join("\n");
    expect(told).not.toContain(token.split(".")[2]);
    expect(told).not.toContain(secret);
  });

  it.each([
    [
      "production without key material",
      { STEWARD_ENV: "production" },
      /^gateway failed to start: STEWARD_JWT_SECRET: or STEWARD_JWKS_URL is required when STEWARD_ENV is production/m,
    ],
    [
      "staging without issuer and audience",
      { STEWARD_ENV: "staging", STEWARD_JWT_SECRET: secret },
      /^gateway failed to start: STEWARD_JWT_ISSUER, STEWARD_JWT_AUDIENCE: is required/m,
    ],
    ["test on no secret (the generated one is for development only)", { STEWARD_ENV: "test" }, /the generated development secret is for development only/],
  ])("the gateway refuses to start in %s, naming the variable", async (_label, env, message) => {
    const stripped = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(STEWARD_|GATEWAY_)/.test(k)));
    const child = spawn(process.execPath, [join(__dirname, "..", "..", "services", "gateway", "dist", "main.js")], {
      env: { ...stripped, GATEWAY_PORT: "0", ...env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const code = await new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(() => (child.kill("SIGKILL"), reject(new Error("the gateway did not exit within 15 s"))), 15_000);
      child.once("close", (exitCode) => (clearTimeout(timer), resolve(exitCode)));
    });
    expect(code).toBe(1);
    expect(stderr).toMatch(message);
    expect(stderr).not.toContain(secret);
  });
});

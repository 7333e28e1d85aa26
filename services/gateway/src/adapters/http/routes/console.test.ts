import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jwtVerify } from "jose";
import type { FastifyInstance } from "fastify";
import { createLogger } from "@steward/platform";
import { buildApp, type AppDeps } from "../app";
import { CONSOLE_CSP } from "./console";
import { devSignInFrom } from "./dev-sign-in";
import { readGatewayConfig } from "../../../config";

const SECRET = "s".repeat(40);

/** The app on a free port (light-my-request's inject does not load under jest here), and a caller. */
async function appWith(extra: Partial<AppDeps>) {
  const app = buildApp({ logger: createLogger("gateway-test", "silent"), ...extra } as unknown as AppDeps);
  const base = await app.listen({ port: 0, host: "127.0.0.1" });
  const call = async (method: string, url: string) => {
    const res = await fetch(`${base}${url}`, { method, redirect: "manual" });
    const body = await res.text();
    return { statusCode: res.status, headers: Object.fromEntries(res.headers), body, json: () => JSON.parse(body) };
  };
  opened.push(app);
  return { call, close: () => app.close() };
}

const opened: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((app) => app.close()));
});

describe("the web console's files at /console", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "steward-console-"));
    mkdirSync(join(dir, "assets"));
    writeFileSync(join(dir, "index.html"), '<!doctype html><script type="module" src="/console/assets/app-1a2b3c.js"></script>');
    writeFileSync(join(dir, "assets", "app-1a2b3c.js"), "console.log(1)");
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("serves index.html revalidated and hashed assets immutable, each with the CSP and nosniff", async () => {
    const app = await appWith({ consoleDir: dir, devSignIn: null });
    const index = await app.call("GET", "/console/");
    expect([index.statusCode, index.headers["content-type"], index.headers["cache-control"]]).toEqual([200, expect.stringMatching(/^text\/html/), "no-cache"]);
    expect(index.headers["content-security-policy"]).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toMatch(/default-src 'self'/);
    expect(CONSOLE_CSP).toMatch(/script-src 'self'(;|$)/);
    expect(CONSOLE_CSP).toMatch(/connect-src 'self'/);
    expect(index.headers["x-content-type-options"]).toBe("nosniff");
    const asset = await app.call("GET", "/console/assets/app-1a2b3c.js");
    expect([asset.statusCode, asset.headers["cache-control"], asset.headers["x-content-type-options"]]).toEqual([
      200,
      "public, max-age=31536000, immutable",
      "nosniff",
    ]);
    expect((await app.call("GET", "/console")).headers.location).toBe("/console/");
    const missing = await app.call("GET", "/console/assets/nope.js");
    expect([missing.statusCode, missing.json().code]).toEqual([404, 10050]);
    expect((await app.call("GET", "/console/../package.json")).statusCode).not.toBe(200);
  });

  it("answers 503 with how to build it when the console is not built", async () => {
    const app = await appWith({ consoleDir: null, devSignIn: null });
    for (const url of ["/console/", "/console/assets/x.js"]) {
      const res = await app.call("GET", url);
      expect([res.statusCode, res.headers["content-type"]]).toEqual([503, expect.stringMatching(/^application\/problem\+json/)]);
      expect(res.json()).toMatchObject({ status: 503, code: 10503, detail: expect.stringContaining("npm run build") });
    }
  });
});

describe("development sign-in (POST /v1/dev/sign-in)", () => {
  it("mints a token for the demo user when on, never cached", async () => {
    const app = await appWith({ consoleDir: null, devSignIn: { secret: SECRET } });
    const res = await app.call("POST", "/v1/dev/sign-in");
    expect([res.statusCode, res.headers["cache-control"]]).toEqual([200, "no-store"]);
    const body = res.json();
    expect(body).toMatchObject({ tenant_id: "demo", user_id: "demo-user", roles: ["member"] });
    const { payload } = await jwtVerify(body.token, new TextEncoder().encode(SECRET));
    expect(payload).toMatchObject({ sub: "demo-user", tid: "demo", roles: ["member"] });
    expect(Date.parse(body.expires_at)).toBeGreaterThan(Date.now() + 11 * 3600_000);
  });

  it("answers 404 when off, as a route that does not exist", async () => {
    const app = await appWith({ consoleDir: null, devSignIn: null });
    const res = await app.call("POST", "/v1/dev/sign-in");
    expect([res.statusCode, res.json().code]).toEqual([404, 10050]);
    expect(res.body).not.toMatch(/eyJ/);
  });

  /** As the gateway decides at boot: from its checked configuration and the secret it checks tokens with. */
  const signInFor = (env: NodeJS.ProcessEnv) => {
    const config = readGatewayConfig(env);
    return devSignInFrom(config, config.STEWARD_JWKS_URL ? undefined : config.STEWARD_JWT_SECRET);
  };

  it.each([
    ["production", { STEWARD_ENV: "production", STEWARD_JWT_SECRET: SECRET, STEWARD_JWT_ISSUER: "i", STEWARD_JWT_AUDIENCE: "a" }],
    ["staging", { STEWARD_ENV: "staging", STEWARD_JWT_SECRET: SECRET, STEWARD_JWT_ISSUER: "i", STEWARD_JWT_AUDIENCE: "a" }],
    ["test without the switch", { STEWARD_ENV: "test", STEWARD_TEST_HOOKS: "1", STEWARD_JWT_SECRET: SECRET }],
    ["development with a JWKS issuer", { STEWARD_ENV: "development", STEWARD_JWKS_URL: "https://issuer.example/jwks" }],
  ])("is off in %s", (_label, env) => {
    expect(signInFor(env)).toBeNull();
  });

  it("refuses the suites' switch at boot without the test hooks, and anywhere but in the suites", () => {
    expect(() => readGatewayConfig({ STEWARD_ENV: "test", STEWARD_TEST_DEV_SIGN_IN: "1", STEWARD_JWT_SECRET: SECRET })).toThrow(/STEWARD_TEST_DEV_SIGN_IN/);
    expect(() => readGatewayConfig({ STEWARD_ENV: "development", STEWARD_TEST_DEV_SIGN_IN: "1" })).toThrow(/STEWARD_TEST_DEV_SIGN_IN/);
  });

  it("is on in development (with its secret) and in the suites only with the test hooks and the switch", () => {
    expect(signInFor({ STEWARD_ENV: "development", STEWARD_JWT_SECRET: SECRET })).toEqual({ secret: SECRET });
    expect(signInFor({ STEWARD_ENV: "test", STEWARD_TEST_HOOKS: "1", STEWARD_TEST_DEV_SIGN_IN: "1", STEWARD_JWT_SECRET: SECRET })).toEqual({ secret: SECRET });
  });
});

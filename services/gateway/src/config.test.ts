import { ConfigError } from "@steward/platform";
import { readGatewayConfig } from "./config";

const secret = "k".repeat(40);
const generated = "g".repeat(43);

function refusal(env: Record<string, string>, hasGenerated = false): ConfigError {
  let caught: unknown;
  try {
    readGatewayConfig(env, () => (hasGenerated ? generated : undefined));
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(ConfigError);
  const error = caught as ConfigError;
  // The message names the variable and never echoes a secret.
  expect(error.message).not.toContain(secret);
  expect(error.message).not.toContain(generated);
  return error;
}

describe("readGatewayConfig", () => {
  it("runs in development on the generated secret, with documented defaults", () => {
    const config = readGatewayConfig({ STEWARD_ENV: "development" }, () => generated);
    expect(config).toMatchObject({
      STEWARD_ENV: "development",
      STEWARD_JWT_SECRET: undefined,
      STEWARD_JWT_MAX_TTL: 86_400,
      GATEWAY_REQUEST_TIMEOUT_MS: 30_000,
      GATEWAY_CONNECTION_TIMEOUT_MS: 120_000,
      GATEWAY_KEEP_ALIVE_TIMEOUT_MS: 72_000,
      GATEWAY_MAX_REQUESTS_PER_SOCKET: 1_000,
    });
  });

  it("runs as production when STEWARD_ENV is unset: no generated secret, key material required", () => {
    const error = refusal({}, true);
    expect(error.message).toMatch(/^STEWARD_JWT_SECRET: or STEWARD_JWKS_URL is required when STEWARD_ENV is production/);
  });

  it("refuses a short deadline unless the test hooks are on (STEWARD_TEST_HOOKS=1 with STEWARD_ENV=test)", () => {
    expect(refusal({ STEWARD_ENV: "test", STEWARD_JWT_SECRET: secret, STEWARD_TEST_DEADLINE_SECONDS: "3" }).message).toBe(
      "STEWARD_TEST_DEADLINE_SECONDS: is a test-only switch and needs STEWARD_TEST_HOOKS=1",
    );
    expect(refusal({ STEWARD_ENV: "production", STEWARD_JWT_SECRET: secret, STEWARD_TEST_HOOKS: "1" }).variable).toBe("STEWARD_TEST_HOOKS");
    const config = readGatewayConfig({ STEWARD_ENV: "test", STEWARD_JWT_SECRET: secret, STEWARD_TEST_HOOKS: "1", STEWARD_TEST_DEADLINE_SECONDS: "3" });
    expect(config.STEWARD_TEST_DEADLINE_SECONDS).toBe(3);
  });

  it.each(["test", "staging", "production"])("refuses to start without key material when STEWARD_ENV=%s", (stewardEnv) => {
    const error = refusal({ STEWARD_ENV: stewardEnv, STEWARD_JWT_ISSUER: "i", STEWARD_JWT_AUDIENCE: "a" });
    expect(error.variable).toBe("STEWARD_JWT_SECRET");
    expect(error.message).toMatch(/STEWARD_JWKS_URL is required when STEWARD_ENV is \w+/);
  });

  it("refuses the generated development secret passed explicitly outside development", () => {
    const error = refusal({ STEWARD_ENV: "test", STEWARD_JWT_SECRET: generated }, true);
    expect(error.message).toBe("STEWARD_JWT_SECRET: is the generated development secret, refused when STEWARD_ENV is test");
    expect(readGatewayConfig({ STEWARD_ENV: "development", STEWARD_JWT_SECRET: generated }, () => generated).STEWARD_JWT_SECRET).toBe(generated);
  });

  it.each(["staging", "production"])("requires STEWARD_JWT_ISSUER and STEWARD_JWT_AUDIENCE when STEWARD_ENV=%s", (stewardEnv) => {
    expect(refusal({ STEWARD_ENV: stewardEnv, STEWARD_JWT_SECRET: secret }).message).toBe(
      `STEWARD_JWT_ISSUER, STEWARD_JWT_AUDIENCE: is required when STEWARD_ENV is ${stewardEnv}`,
    );
    expect(refusal({ STEWARD_ENV: stewardEnv, STEWARD_JWT_SECRET: secret, STEWARD_JWT_ISSUER: "https://id" }).variable).toBe("STEWARD_JWT_AUDIENCE");
    const config = readGatewayConfig({
      STEWARD_ENV: stewardEnv,
      STEWARD_JWT_SECRET: secret,
      STEWARD_JWT_ISSUER: "https://id",
      STEWARD_JWT_AUDIENCE: "steward",
    });
    expect(config.STEWARD_JWT_AUDIENCE).toBe("steward");
  });

  it("accepts a JWKS URL as the key material in production", () => {
    const config = readGatewayConfig({
      STEWARD_ENV: "production",
      STEWARD_JWKS_URL: "https://id.acme.test/.well-known/jwks.json",
      STEWARD_JWT_ISSUER: "https://id.acme.test",
      STEWARD_JWT_AUDIENCE: "steward",
    });
    expect(config.STEWARD_JWKS_URL).toBe("https://id.acme.test/.well-known/jwks.json");
  });

  it.each([
    ["STEWARD_JWT_MAX_TTL", "forever"],
    ["STEWARD_JWT_MAX_TTL", "0"],
    ["GATEWAY_REQUEST_TIMEOUT_MS", "0"],
    ["GATEWAY_CONNECTION_TIMEOUT_MS", "5000"], // below the SSE keep-alive: streams would be cut
    ["GATEWAY_KEEP_ALIVE_TIMEOUT_MS", "-1"],
    ["GATEWAY_MAX_REQUESTS_PER_SOCKET", "0"],
    ["STEWARD_JWKS_URL", "not a url"],
  ])("names %s when its value %j is refused", (variable, value) => {
    expect(refusal({ [variable]: value }).variable).toBe(variable);
  });
});

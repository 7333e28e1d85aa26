import { ConfigError, commonConfig, env, readConfig } from "./config";

describe("readConfig", () => {
  it("applies the documented defaults", () => {
    const config = readConfig(commonConfig, {});
    expect(config).toMatchObject({
      DATABASE_URL: "postgres://postgres@127.0.0.1:5432/steward",
      NATS_URL: "nats://127.0.0.1:4222",
      STEWARD_ENV: "production",
      STEWARD_NATS_NAMESPACE: "",
      STEWARD_NATS_REPLICAS: 1,
    });
  });

  it("takes a NATS cluster's seed servers, comma-separated, and checks each one", () => {
    const config = readConfig(commonConfig, { NATS_URL: "nats://n1:4222, nats://n2:4222,nats://n3:4222", STEWARD_NATS_REPLICAS: "3" });
    expect(config.NATS_URL).toBe("nats://n1:4222,nats://n2:4222,nats://n3:4222");
    expect(config.STEWARD_NATS_REPLICAS).toBe(3);
    expect(() => readConfig(commonConfig, { NATS_URL: "nats://n1:4222,http://n2:4222" })).toThrow(/^NATS_URL: must use one of nats, tls$/);
    expect(() => readConfig(commonConfig, { NATS_URL: "nats://n1:4222,," })).toThrow(/^NATS_URL: has an empty entry$/);
    expect(() => readConfig(commonConfig, { STEWARD_NATS_REPLICAS: "6" })).toThrow(/^STEWARD_NATS_REPLICAS: must be an integer 1-5$/);
  });

  it("stops on a bad value and names the variable", () => {
    expect(() => readConfig(commonConfig, { STEWARD_ENV: "prod" })).toThrow(/^STEWARD_ENV: must be one of/);
    expect(() => readConfig({ GATEWAY_PORT: env.port(8080) }, { GATEWAY_PORT: "70000" })).toThrow(ConfigError);
    expect(() => readConfig({ POLICY_ADDR: env.hostPort() }, { POLICY_ADDR: "nohost" })).toThrow(/POLICY_ADDR/);
  });

  it("names every bad variable at once", () => {
    try {
      readConfig(commonConfig, { DATABASE_URL: "mysql://x", NATS_URL: "http://y" });
      throw new Error("expected a ConfigError");
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).variable).toBe("DATABASE_URL, NATS_URL");
    }
  });

  it("leaves an optional URL unset, and refuses one that is set but is not a URL", () => {
    const spec = { LLM_BASE_URL: env.optionalUrl(["http", "https"]) };
    expect(readConfig(spec, {}).LLM_BASE_URL).toBeUndefined();
    expect(readConfig(spec, { LLM_BASE_URL: "" }).LLM_BASE_URL).toBeUndefined();
    expect(readConfig(spec, { LLM_BASE_URL: "http://model:8000/v1" }).LLM_BASE_URL).toBe("http://model:8000/v1");
    expect(() => readConfig(spec, { LLM_BASE_URL: "${LLM_BASE_URL:-}" })).toThrow(/^LLM_BASE_URL: is not a URL$/);
    expect(() => readConfig(spec, { LLM_BASE_URL: "ftp://model" })).toThrow(/^LLM_BASE_URL: must use one of http, https$/);
  });

  it("runs as production when STEWARD_ENV is unset or empty: a forgotten variable never lowers the guard", () => {
    expect(readConfig(commonConfig, {}).STEWARD_ENV).toBe("production");
    expect(readConfig(commonConfig, { STEWARD_ENV: "" }).STEWARD_ENV).toBe("production");
    expect(readConfig(commonConfig, { STEWARD_ENV: "development" }).STEWARD_ENV).toBe("development");
  });

  it("reads a flag as 1/true or 0/false/unset, and refuses anything else", () => {
    const spec = { F: env.flag() };
    expect([undefined, "", "0", "false"].map((v) => readConfig(spec, { F: v }).F)).toEqual([false, false, false, false]);
    expect(["1", "true"].map((v) => readConfig(spec, { F: v }).F)).toEqual([true, true]);
    expect(() => readConfig(spec, { F: "yes" })).toThrow(/^F: must be 1 \(on\) or 0 \(off\)$/);
  });

  it("reads an unset flag as its default when it has one, and still turns it off on 0/false", () => {
    const spec = { F: env.flag(true) };
    expect([undefined, ""].map((v) => readConfig(spec, { F: v }).F)).toEqual([true, true]);
    expect(["0", "false"].map((v) => readConfig(spec, { F: v }).F)).toEqual([false, false]);
  });

  it("never echoes a secret that is too short", () => {
    expect(() => readConfig({ S: env.secret(32) }, { S: "hunter2" })).toThrow(/^S: must be at least 32 characters$/);
  });
});

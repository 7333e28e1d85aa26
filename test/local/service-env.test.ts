// The environment the launcher (npm start, the test platforms) gives each service: SPEC §10, "each service
// receives only the variables it uses": the JWT secret only the gateway, model keys only the runner.

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { scopeEnv, serviceEnv } = require("../../infra/local/launcher.cjs") as {
  scopeEnv(service: string, inherited: Record<string, string | undefined>, given: Record<string, string | undefined>): Record<string, string>;
  serviceEnv(
    service: string,
    shared: Record<string, string>,
    known: Record<string, unknown>,
    perService?: Record<string, Record<string, string>>,
  ): Record<string, string | undefined>;
};

const services = ["gateway", "agent-runner", "tool-exec", "policy"];

describe("scopeEnv", () => {
  const given = {
    DATABASE_URL: "postgres://x@db/steward",
    STEWARD_ENV: "test",
    STEWARD_JWT_SECRET: "jwt-secret",
    STEWARD_JWT_ISSUER: "https://id",
    LLM_BASE_URL: "http://model/v1",
    LLM_API_KEY: "sk-model",
    LLM_FALLBACK_API_KEY: "sk-fallback",
    DATASET_URL: "postgres://reader:pw@db/steward_datasets",
    DATASETS: '{"ledger":{"url":"postgres://ledger_reader:pw@db/ledger","schema":"ledger"}}',
    MCP_SERVERS: '[{"name":"x","headers":{"authorization":"Bearer t"}}]',
  };
  const holders = (name: string, inherited: Record<string, string> = {}, from: Record<string, string> = given) =>
    services.filter((s) => scopeEnv(s, inherited, from)[name] !== undefined);

  it("gives the JWT settings to the gateway, the model's to the runner, the datasets and MCP servers to tool-exec", () => {
    expect(holders("STEWARD_JWT_SECRET")).toEqual(["gateway"]);
    expect(holders("STEWARD_JWT_ISSUER")).toEqual(["gateway"]);
    expect(holders("LLM_API_KEY")).toEqual(["agent-runner"]);
    expect(holders("LLM_FALLBACK_API_KEY")).toEqual(["agent-runner"]);
    expect(holders("LLM_BASE_URL")).toEqual(["agent-runner"]);
    expect(holders("DATASET_URL")).toEqual(["tool-exec"]);
    expect(holders("DATASETS")).toEqual(["tool-exec"]);
    expect(holders("MCP_SERVERS")).toEqual(["tool-exec"]);
    expect(holders("DATABASE_URL")).toEqual(services);
    expect(holders("STEWARD_ENV")).toEqual(services);
  });

  it("passes on no secret of the launcher's own environment, and no credential it did not give", () => {
    const inherited = {
      PATH: "/usr/bin",
      GITHUB_TOKEN: "ghp_x",
      AWS_SECRET_ACCESS_KEY: "aws",
      NATS_PASSWORD: "shell-nats",
      STEWARD_TLS_KEY: "/k",
      LLM_API_KEY: "sk-shell",
    };
    for (const name of ["GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "NATS_PASSWORD", "STEWARD_TLS_KEY"])
      expect([name, holders(name, inherited, {})]).toEqual([name, []]);
    expect(holders("PATH", inherited, {})).toEqual(services);
    // A model key in the shell still reaches the runner, and only the runner.
    expect(holders("LLM_API_KEY", inherited, {})).toEqual(["agent-runner"]);
  });

  it("lets the caller remove an inherited variable with undefined", () => {
    expect(scopeEnv("policy", { LOG_LEVEL: "debug" }, { LOG_LEVEL: undefined }).LOG_LEVEL).toBeUndefined();
  });
});

describe("serviceEnv", () => {
  it("adds each service's own variables (its credentials) to the shared ones", () => {
    const perService = { gateway: { NATS_USER: "gateway", NATS_PASSWORD: "g" }, policy: { NATS_USER: "policy", NATS_PASSWORD: "p" } };
    const known = { policyAddr: "127.0.0.1:1", toolExecAddr: "127.0.0.1:2", gatewayPort: 0, healthPort: 0 };
    const gateway = serviceEnv("gateway", { LOG_LEVEL: "info" }, known, perService);
    const policy = serviceEnv("policy", { LOG_LEVEL: "info" }, known, perService);
    expect([gateway.NATS_PASSWORD, policy.NATS_PASSWORD, gateway.LOG_LEVEL]).toEqual(["g", "p", "info"]);
    expect(serviceEnv("tool-exec", { LOG_LEVEL: "info" }, known, perService).NATS_PASSWORD).toBeUndefined();
  });
});

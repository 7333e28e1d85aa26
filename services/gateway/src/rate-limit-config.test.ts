import { ConfigError } from "@steward/platform";
import { readGatewayConfig } from "./config";

const development = { STEWARD_ENV: "development" };
const generated = () => "g".repeat(43);

describe("the gateway's rate-limit variables", () => {
  it("default to the documented limits", () => {
    expect(readGatewayConfig(development, generated)).toMatchObject({
      GATEWAY_RATE_LIMIT_WINDOW_SECONDS: 60,
      GATEWAY_RATE_LIMIT_PER_USER: 6000,
      GATEWAY_RATE_LIMIT_PER_TENANT: 30_000,
      GATEWAY_RATE_LIMIT_RUNS_PER_USER: 600,
      GATEWAY_RATE_LIMIT_RUNS_PER_TENANT: 3000,
      GATEWAY_RATE_LIMIT_PER_ADDRESS: 600,
    });
  });

  it("take low limits (tests) and high ones (benchmarks)", () => {
    const config = readGatewayConfig({ ...development, GATEWAY_RATE_LIMIT_RUNS_PER_TENANT: "1", GATEWAY_RATE_LIMIT_PER_USER: "1000000000" }, generated);
    expect([config.GATEWAY_RATE_LIMIT_RUNS_PER_TENANT, config.GATEWAY_RATE_LIMIT_PER_USER]).toEqual([1, 1_000_000_000]);
  });

  it.each([
    ["GATEWAY_RATE_LIMIT_PER_USER", "0"],
    ["GATEWAY_RATE_LIMIT_RUNS_PER_TENANT", "ten"],
    ["GATEWAY_RATE_LIMIT_WINDOW_SECONDS", "86400"],
    ["GATEWAY_RATE_LIMIT_PER_ADDRESS", "-5"],
  ])("stop the boot naming the variable when %s is %s", (name, value) => {
    expect(() => readGatewayConfig({ ...development, [name]: value }, generated)).toThrow(ConfigError);
    expect(() => readGatewayConfig({ ...development, [name]: value }, generated)).toThrow(new RegExp(`^${name}: must be an integer`));
  });
});

import { ConfigError, readConfig, stewardEnvironments, type StewardEnv } from "./config";
import { testHooks, testHooksConfig } from "./test-hooks";

const switches = ["STEWARD_TEST_DEADLINE_SECONDS", "STEWARD_TEST_CRASH_AT"];

function hooks(source: Record<string, string>): boolean {
  const config = readConfig({ STEWARD_ENV: (raw) => (raw ?? "production") as StewardEnv, ...testHooksConfig }, source);
  return testHooks(config, source, switches);
}

function refusal(source: Record<string, string>): ConfigError {
  try {
    hooks(source);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

describe("testHooks", () => {
  it("is on only with STEWARD_TEST_HOOKS=1 and STEWARD_ENV=test, both", () => {
    expect(hooks({ STEWARD_ENV: "test", STEWARD_TEST_HOOKS: "1", STEWARD_TEST_DEADLINE_SECONDS: "3" })).toBe(true);
    expect(hooks({ STEWARD_ENV: "test", STEWARD_TEST_HOOKS: "1" })).toBe(true);
    for (const stewardEnv of stewardEnvironments) expect(hooks({ STEWARD_ENV: stewardEnv })).toBe(false);
  });

  it("does not turn on with STEWARD_ENV=test alone: a test switch set then is refused, naming it and the missing switch", () => {
    const error = refusal({ STEWARD_ENV: "test", STEWARD_TEST_CRASH_AT: "before_model" });
    expect(error.message).toBe("STEWARD_TEST_CRASH_AT: is a test-only switch and needs STEWARD_TEST_HOOKS=1");
  });

  it.each(["development", "staging", "production"])("refuses STEWARD_TEST_HOOKS=1 when STEWARD_ENV=%s", (stewardEnv) => {
    const error = refusal({ STEWARD_ENV: stewardEnv, STEWARD_TEST_HOOKS: "1" });
    expect(error.message).toBe(`STEWARD_TEST_HOOKS: is for the test suites only (STEWARD_ENV=test), refused when STEWARD_ENV is ${stewardEnv}`);
  });

  it.each(["staging", "production"])("refuses every test switch set when STEWARD_ENV=%s, whatever else is set", (stewardEnv) => {
    const error = refusal({ STEWARD_ENV: stewardEnv, STEWARD_TEST_DEADLINE_SECONDS: "180", STEWARD_TEST_CRASH_AT: "after_tool" });
    expect(error.variable).toBe("STEWARD_TEST_DEADLINE_SECONDS, STEWARD_TEST_CRASH_AT");
    expect(error.message).toMatch(new RegExp(`is a test-only switch, refused when STEWARD_ENV is ${stewardEnv}$`));
    expect(refusal({ STEWARD_ENV: stewardEnv, STEWARD_TEST_HOOKS: "1", STEWARD_TEST_CRASH_AT: "after_tool" }).variable).toBe("STEWARD_TEST_HOOKS");
  });
});

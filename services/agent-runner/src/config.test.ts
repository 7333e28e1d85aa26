import { ConfigError } from "@steward/platform";
import { readRunnerConfig } from "./config";

function refusal(source: Record<string, string>): ConfigError {
  try {
    readRunnerConfig(source);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

const model = { LLM_BASE_URL: "http://127.0.0.1:9/v1", LLM_API_KEY: "sk-never-shown" };

describe("readRunnerConfig", () => {
  it("takes the crash point and a short ask-user wait only as test hooks", () => {
    const config = readRunnerConfig({ STEWARD_ENV: "test", STEWARD_TEST_HOOKS: "1", STEWARD_TEST_CRASH_AT: "during_tool", STEWARD_TEST_ASK_WAIT_SECONDS: "2" });
    expect(config).toMatchObject({ crashAt: "during_tool", STEWARD_TEST_ASK_WAIT_SECONDS: 2 });
    expect(readRunnerConfig({ STEWARD_ENV: "development" })).toMatchObject({ crashAt: undefined, STEWARD_TEST_ASK_WAIT_SECONDS: 300 });
  });

  it("refuses a test switch with STEWARD_ENV=test alone, and in production whatever else is set", () => {
    expect(refusal({ STEWARD_ENV: "test", ...model, STEWARD_TEST_CRASH_AT: "before_model" }).message).toBe(
      "STEWARD_TEST_CRASH_AT: is a test-only switch and needs STEWARD_TEST_HOOKS=1",
    );
    expect(refusal({ STEWARD_ENV: "production", ...model, STEWARD_TEST_ASK_WAIT_SECONDS: "2" }).variable).toBe("STEWARD_TEST_ASK_WAIT_SECONDS");
    expect(refusal({ STEWARD_ENV: "production", ...model, STEWARD_TEST_HOOKS: "1", STEWARD_TEST_ASK_WAIT_SECONDS: "2" }).variable).toBe("STEWARD_TEST_HOOKS");
  });

  it("refuses an unknown crash point", () => {
    expect(refusal({ STEWARD_ENV: "test", STEWARD_TEST_HOOKS: "1", STEWARD_TEST_CRASH_AT: "everywhere" }).message).toMatch(
      /^STEWARD_TEST_CRASH_AT: must be one of before_model, after_model/,
    );
  });

  it("runs the scripted model in development (the demo) and as a test hook, never on STEWARD_ENV=test alone", () => {
    expect(readRunnerConfig({ STEWARD_ENV: "development" }).LLM_BASE_URL).toBeUndefined();
    expect(readRunnerConfig({ STEWARD_ENV: "test", STEWARD_TEST_HOOKS: "1" }).LLM_BASE_URL).toBeUndefined();
    const error = refusal({ STEWARD_ENV: "test" });
    expect(error.variable).toBe("LLM_BASE_URL");
    expect(readRunnerConfig({ STEWARD_ENV: "test", ...model }).LLM_BASE_URL).toBe(model.LLM_BASE_URL);
  });

  it("never echoes the model's key in a refusal", () => {
    expect(refusal({ STEWARD_ENV: "staging", ...model, STEWARD_TEST_CRASH_AT: "x" }).message).not.toContain(model.LLM_API_KEY);
  });
});

import { randomUUID } from "node:crypto";
import { ConfigError, commonConfig, env, grpcTlsConfig, healthConfig, natsAuthConfig, readConfig, testHooks, testHooksConfig } from "@steward/platform";
import { crashPointNames, type CrashPoint } from "./app/crash-points";

/** The runner's variables (SPEC §8 plus its own); every default is documented in README.md. */
const runnerConfigSpec = {
  ...commonConfig,
  ...healthConfig(8081),
  ...testHooksConfig,
  ...grpcTlsConfig,
  ...natsAuthConfig,
  TOOL_EXEC_ADDR: env.hostPort("127.0.0.1:50051"),
  RUNNER_CONCURRENCY: env.int(1, 1000, 32),
  /** Fair share: runs of one tenant in flight at once across all runners; more wait their turn. 0: no limit. */
  RUNNER_TENANT_MAX_RUNNING: env.int(0, 100_000, 16),
  RUNNER_ID: env.string(`runner-${randomUUID().slice(0, 8)}`),
  RUNNER_LEASE_MS: env.int(500, 600_000, 2000),
  RUNNER_ACK_WAIT_MS: env.int(500, 600_000, 2500),
  RUNNER_MAX_DELIVER: env.int(1, 100, 5),
  RUNNER_RETRY_BACKOFF_MS: env.int(1, 60_000, 1000),
  RUNNER_REAPER_INTERVAL_MS: env.int(100, 3_600_000, 60_000),
  RUNNER_REDRIVE_AFTER_MS: env.int(100, 3_600_000, 30_000),
  RUNNER_REDRIVE_INTERVAL_MS: env.int(100, 3_600_000, 5000),
  /** How long a tool call that provably did nothing (PDP, database or tool-exec away) is tried again. */
  RUNNER_TOOL_RETRY_MS: env.int(0, 600_000, 60_000),
  /** The appends of the runs in hand written together, several runs per statement (docs/architecture.md). */
  RUNNER_APPENDS_TOGETHER: env.flag(true),
  /** Test hook (STEWARD_TEST_HOOKS=1): an ask-user wait shorter than SPEC's 5 minutes. */
  STEWARD_TEST_ASK_WAIT_SECONDS: env.int(1, 300, 300),
  /** Test hook (STEWARD_TEST_HOOKS=1): the loop point where this process kills itself once. */
  STEWARD_TEST_CRASH_AT: env.optional(),
  LLM_BASE_URL: env.optionalUrl(["http", "https"]),
  LLM_API_KEY: env.optional(),
  LLM_MODEL: env.optional(),
  LLM_FALLBACK_BASE_URL: env.optionalUrl(["http", "https"]),
  LLM_FALLBACK_API_KEY: env.optional(),
  LLM_FALLBACK_MODEL: env.optional(),
  LLM_MAX_OUTPUT_TOKENS: env.int(1, 1_000_000, 0),
  LLM_CONTEXT_TOKENS: env.int(0, 10_000_000, 0),
};

const parseSpec = (source: NodeJS.ProcessEnv) => readConfig(runnerConfigSpec, source);
export type RunnerConfig = ReturnType<typeof parseSpec> & {
  /** The crash point to die at (test hooks only). */
  readonly crashAt?: CrashPoint;
};

/**
 * Reads and checks the runner's configuration; every rule names its variable. The test-only switches need
 * STEWARD_TEST_HOOKS=1 with STEWARD_ENV=test, and so does the scripted model anywhere but development (its
 * demo); staging and production refuse them whatever else is set.
 */
export function readRunnerConfig(source: NodeJS.ProcessEnv = process.env): RunnerConfig {
  const config = parseSpec(source);
  const hooks = testHooks(config, source, ["STEWARD_TEST_ASK_WAIT_SECONDS", "STEWARD_TEST_CRASH_AT"]);
  const crashAt = config.STEWARD_TEST_CRASH_AT;
  if (crashAt !== undefined && !(crashPointNames as readonly string[]).includes(crashAt)) {
    throw new ConfigError("STEWARD_TEST_CRASH_AT", `must be one of ${crashPointNames.join(", ")}`);
  }
  if (!config.LLM_BASE_URL && config.STEWARD_ENV === "test" && !hooks) {
    throw new ConfigError("LLM_BASE_URL", "is required when STEWARD_ENV is test: the scripted model is a test hook there (STEWARD_TEST_HOOKS=1)");
  }
  if (config.RUNNER_ACK_WAIT_MS < config.RUNNER_LEASE_MS) {
    // Redelivered before the lease lapsed, a command would only bounce off the live claim.
    throw new ConfigError("RUNNER_ACK_WAIT_MS", "must not be shorter than RUNNER_LEASE_MS");
  }
  return { ...config, crashAt: crashAt as CrashPoint | undefined };
}

import { ConfigError, env, type StewardEnv } from "./config";

/** The explicit switch for behaviour that exists only for the test suites (see `testHooks`). */
export const testHooksConfig = {
  /** `1` turns the test hooks on; accepted only when STEWARD_ENV=test. Default off. */
  STEWARD_TEST_HOOKS: env.flag(),
};

/**
 * Whether this process may use its test-only behaviour (a short deadline or wait, a crash point, the test
 * tools, the scripted model outside development): only with STEWARD_TEST_HOOKS=1 *and* STEWARD_ENV=test, so
 * that neither a stray variable nor STEWARD_ENV=test alone turns on what is meant for the suites. The switch is
 * refused in any other environment, and so is each variable named in `switches` that is set while the hooks
 * are off (in staging and production whatever else is set).
 */
export function testHooks(
  config: { readonly STEWARD_ENV: StewardEnv; readonly STEWARD_TEST_HOOKS: boolean },
  source: NodeJS.ProcessEnv,
  switches: readonly string[] = [],
): boolean {
  if (config.STEWARD_TEST_HOOKS) {
    if (config.STEWARD_ENV === "test") return true;
    throw new ConfigError("STEWARD_TEST_HOOKS", `is for the test suites only (STEWARD_ENV=test), refused when STEWARD_ENV is ${config.STEWARD_ENV}`);
  }
  const set = switches.filter((name) => source[name] !== undefined && source[name] !== "");
  if (set.length > 0) {
    const why =
      config.STEWARD_ENV === "test"
        ? "is a test-only switch and needs STEWARD_TEST_HOOKS=1"
        : `is a test-only switch, refused when STEWARD_ENV is ${config.STEWARD_ENV}`;
    throw new ConfigError(set.join(", "), why);
  }
  return false;
}

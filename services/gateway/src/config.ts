import { join } from "node:path";
import { parseDatasetTenants } from "@steward/store";
import { ConfigError, commonConfig, env, grpcTlsConfig, healthConfig, natsAuthConfig, readConfig, testHooks, testHooksConfig } from "@steward/platform";
import { defaultPolicyDir } from "@steward/pdp";
import { LOOPBACK_HOSTS, hostNames, originList } from "./adapters/http/host-origin";

/** The SSE keep-alive comment interval (ms); an idle-socket timeout must leave room for it. */
export const SSE_KEEP_ALIVE_MS = 15_000;

/** The gateway's variables (SPEC §8 plus its own); every default is documented in README.md. */
export const gatewayConfigSpec = {
  ...commonConfig,
  GATEWAY_PORT: env.port(8080),
  GATEWAY_HOST: env.string("127.0.0.1"),
  /** The host names requests may carry in Host, any port (docs/security.md): a DNS-rebinding page's name is refused. */
  GATEWAY_ALLOWED_HOSTS: hostNames(LOOPBACK_HOSTS),
  /** Origins a browser may call from besides the allowed hosts' own (a console served elsewhere); none by default. */
  GATEWAY_ALLOWED_ORIGINS: originList,
  /** The operator's port (HEALTH_HOST:HEALTH_PORT): /healthz, /readyz and /metrics, never on the public port's /metrics. */
  ...healthConfig(8084),
  /** Time to receive a whole request, headers and body (ms). */
  GATEWAY_REQUEST_TIMEOUT_MS: env.int(1_000, 600_000, 30_000),
  /** A socket with no traffic either way is closed after this long (ms); must exceed the SSE keep-alive. */
  GATEWAY_CONNECTION_TIMEOUT_MS: env.int(SSE_KEEP_ALIVE_MS + 1_000, 3_600_000, 120_000),
  /** An idle keep-alive connection between requests is closed after this long (ms). */
  GATEWAY_KEEP_ALIVE_TIMEOUT_MS: env.int(1_000, 600_000, 72_000),
  /** Requests served on one keep-alive connection before it is closed. */
  GATEWAY_MAX_REQUESTS_PER_SOCKET: env.int(1, 1_000_000, 1_000),
  /** Rate limits (shared by every gateway replica through PostgreSQL): the length of a window, in seconds. */
  GATEWAY_RATE_LIMIT_WINDOW_SECONDS: env.int(1, 3_600, 60),
  /** Requests one user may make per window, any route. */
  GATEWAY_RATE_LIMIT_PER_USER: env.int(1, 1_000_000_000, 6_000),
  /** Requests one tenant (all its users) may make per window, any route. */
  GATEWAY_RATE_LIMIT_PER_TENANT: env.int(1, 1_000_000_000, 30_000),
  /** Runs one user may create per window. */
  GATEWAY_RATE_LIMIT_RUNS_PER_USER: env.int(1, 1_000_000_000, 600),
  /** Runs one tenant may create per window. */
  GATEWAY_RATE_LIMIT_RUNS_PER_TENANT: env.int(1, 1_000_000_000, 3_000),
  /** Requests without valid credentials one client address (IPv6: its /64) may make per window. */
  GATEWAY_RATE_LIMIT_PER_ADDRESS: env.int(1, 1_000_000_000, 600),
  POLICY_ADDR: env.hostPort("127.0.0.1:50052"),
  /** The Cedar schema and default set the route guard's in-process PDP validates against (the policy service's). */
  STEWARD_POLICY_DIR: env.string(defaultPolicyDir),
  /** Tenants whose parsed active sets the route guard holds (as the policy service's POLICY_CACHE_TENANTS). */
  POLICY_CACHE_TENANTS: env.int(1, 1_000_000, 1000),
  /** tool-exec, asked only for its catalogue (MCP search_capabilities); the gateway never invokes a tool. */
  TOOL_EXEC_ADDR: env.hostPort("127.0.0.1:50051"),
  /** Open MCP sessions one user may hold (/mcp, docs/mcp.md); opening one more closes their least recently used. */
  GATEWAY_MCP_SESSIONS_PER_USER: env.int(1, 100, 8),
  /** An MCP session unused this long is closed (seconds). */
  GATEWAY_MCP_IDLE_SECONDS: env.int(60, 86_400, 1_800),
  /** Open MCP sessions of this gateway, all users; beyond it a new session is refused (503) until one closes. */
  GATEWAY_MCP_SESSIONS_MAX: env.int(1, 1_000_000, 10_000),
  /** Open event streams (SSE) of one user, of one tenant, and in all on this gateway; beyond a share 429, beyond all 503. */
  GATEWAY_SSE_STREAMS_PER_USER: env.int(1, 100_000, 32),
  GATEWAY_SSE_STREAMS_PER_TENANT: env.int(1, 1_000_000, 1_000),
  GATEWAY_SSE_STREAMS_MAX: env.int(1, 1_000_000, 10_000),
  /** Open MCP sessions of one tenant on this gateway; beyond it the tenant's new session is refused (429). */
  GATEWAY_MCP_SESSIONS_PER_TENANT: env.int(1, 1_000_000, 1_000),
  /** The tenant whose administrators see the whole platform's status (GET /v1/admin/status); unset: none does. */
  STEWARD_OPERATOR_TENANT: env.optional(),
  /** Which tenants may be granted each dataset (docs/datasets.md); unset: none. tool-exec reads the same list. */
  DATASET_TENANTS: parseDatasetTenants,
  STEWARD_JWT_SECRET: env.secret(32),
  STEWARD_JWKS_URL: env.optionalUrl(["https", "http"]),
  STEWARD_JWT_ISSUER: env.optional(),
  STEWARD_JWT_AUDIENCE: env.optional(),
  /** Longest accepted token lifetime, `exp - iat` (or `exp - now` without `iat`), in seconds. */
  STEWARD_JWT_MAX_TTL: env.int(60, 30 * 86_400, 86_400),
  STEWARD_HOME: env.string(join(process.cwd(), ".steward")),
  ...testHooksConfig,
  ...grpcTlsConfig,
  ...natsAuthConfig,
  /** Test hook (STEWARD_TEST_HOOKS=1): a run deadline shorter than SPEC's 180 s. */
  STEWARD_TEST_DEADLINE_SECONDS: env.int(1, 180, 180),
  /** Test hook (STEWARD_TEST_HOOKS=1): the development sign-in answers in the suites too (the browser suite). */
  STEWARD_TEST_DEV_SIGN_IN: env.flag(),
};

const parseSpec = (source: NodeJS.ProcessEnv) => readConfig(gatewayConfigSpec, source);
export type GatewayConfig = ReturnType<typeof parseSpec>;

/** Where the generated development secret lives (shared with `npm run token` and `npm start`). */
export function devSecretPath(home: string): string {
  return join(home, "dev-jwt-secret");
}

/**
 * Reads and checks the gateway's configuration; every rule names its variable. `generatedSecret` returns the
 * generated development secret if one exists (it is never created here).
 */
export function readGatewayConfig(
  source: NodeJS.ProcessEnv = process.env,
  generatedSecret: (home: string) => string | undefined = () => undefined,
): GatewayConfig {
  const config = parseSpec(source);
  const where = `when STEWARD_ENV is ${config.STEWARD_ENV}`;
  testHooks(config, source, ["STEWARD_TEST_DEADLINE_SECONDS", "STEWARD_TEST_DEV_SIGN_IN"]);
  if (config.STEWARD_ENV !== "development") {
    if (!config.STEWARD_JWT_SECRET && !config.STEWARD_JWKS_URL) {
      throw new ConfigError("STEWARD_JWT_SECRET", `or STEWARD_JWKS_URL is required ${where}: the generated development secret is for development only`);
    }
    const generated = config.STEWARD_JWT_SECRET ? generatedSecret(config.STEWARD_HOME) : undefined;
    if (generated !== undefined && generated === config.STEWARD_JWT_SECRET) {
      throw new ConfigError("STEWARD_JWT_SECRET", `is the generated development secret, refused ${where}`);
    }
  }
  if (config.STEWARD_ENV === "staging" || config.STEWARD_ENV === "production") {
    const missing = (["STEWARD_JWT_ISSUER", "STEWARD_JWT_AUDIENCE"] as const).filter((name) => !config[name]);
    if (missing.length > 0) throw new ConfigError(missing.join(", "), `is required ${where}`);
  }
  return config;
}

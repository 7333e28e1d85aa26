/**
 * Configuration is read once at boot from the environment. Each variable has a parser; a bad value stops the
 * process with a message that names the variable and never echoes a secret's value.
 */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = "ConfigError";
  }
}

export type Parser<T> = (raw: string | undefined, name: string) => T;

function orDefault<T>(raw: string | undefined, fallback: T | undefined, name: string, parse: (v: string) => T): T {
  if (raw === undefined || raw === "") {
    if (fallback === undefined) throw new ConfigError(name, "is required");
    return fallback;
  }
  return parse(raw);
}

function checkUrl(v: string, protocols: readonly string[], name: string): string {
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw new ConfigError(name, "is not a URL");
  }
  if (!protocols.includes(url.protocol.replace(/:$/, ""))) {
    throw new ConfigError(name, `must use one of ${protocols.join(", ")}`);
  }
  return v;
}

export const env = {
  string:
    (fallback?: string): Parser<string> =>
    (raw, name) =>
      orDefault(raw, fallback, name, (v) => v),
  optional: (): Parser<string | undefined> => (raw) => (raw === undefined || raw === "" ? undefined : raw),
  secret:
    (minLength: number): Parser<string | undefined> =>
    (raw, name) => {
      if (raw === undefined || raw === "") return undefined;
      if (raw.length < minLength) throw new ConfigError(name, `must be at least ${minLength} characters`);
      return raw;
    },
  url:
    (protocols: readonly string[], fallback?: string): Parser<string> =>
    (raw, name) =>
      orDefault(raw, fallback, name, (v) => checkUrl(v, protocols, name)),
  /** A URL that may be left unset (undefined); a value that is set must be a URL of one of `protocols`. */
  optionalUrl:
    (protocols: readonly string[]): Parser<string | undefined> =>
    (raw, name) =>
      raw === undefined || raw === "" ? undefined : checkUrl(raw, protocols, name),
  /** One URL or several separated by commas (a cluster's seed servers); the value is kept as written. */
  urlList:
    (protocols: readonly string[], fallback?: string): Parser<string> =>
    (raw, name) =>
      orDefault(raw, fallback, name, (v) => {
        const parts = v.split(",").map((part) => part.trim());
        if (parts.some((part) => part === "")) throw new ConfigError(name, "has an empty entry");
        for (const part of parts) checkUrl(part, protocols, name);
        return parts.join(",");
      }),
  port:
    (fallback?: number): Parser<number> =>
    (raw, name) =>
      orDefault(raw, fallback, name, (v) => {
        const n = Number(v);
        if (!/^\d+$/.test(v) || n > 65535) throw new ConfigError(name, "must be a port number 0-65535");
        return n;
      }),
  hostPort:
    (fallback?: string): Parser<string> =>
    (raw, name) =>
      orDefault(raw, fallback, name, (v) => {
        const m = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(v);
        if (!m || Number(m[2]) > 65535) throw new ConfigError(name, "must be host:port");
        return v;
      }),
  oneOf:
    <T extends string>(values: readonly T[], fallback?: T): Parser<T> =>
    (raw, name) =>
      orDefault(raw, fallback, name, (v) => {
        if (!(values as readonly string[]).includes(v)) {
          throw new ConfigError(name, `must be one of ${values.join(", ")}`);
        }
        return v as T;
      }),
  int:
    (min: number, max: number, fallback?: number): Parser<number> =>
    (raw, name) =>
      orDefault(raw, fallback, name, (v) => {
        const n = Number(v);
        if (!/^-?\d+$/.test(v) || n < min || n > max) throw new ConfigError(name, `must be an integer ${min}-${max}`);
        return n;
      }),
  /** An on/off switch: `1` or `true` is on, `0` or `false` is off; unset or empty is `fallback` (off unless given). */
  flag:
    (fallback = false): Parser<boolean> =>
    (raw, name) => {
      if (raw === undefined || raw === "") return fallback;
      if (raw === "0" || raw === "false") return false;
      if (raw === "1" || raw === "true") return true;
      throw new ConfigError(name, "must be 1 (on) or 0 (off)");
    },
  namespace: (): Parser<string> => (raw, name) =>
    orDefault(raw, "", name, (v) => {
      if (!/^[a-z][a-z0-9_]{0,31}$/.test(v)) throw new ConfigError(name, "must match [a-z][a-z0-9_]{0,31}");
      return v;
    }),
};

/** Parses every variable of a spec; collects all problems so that one boot names them all. */
export function readConfig<T extends Record<string, unknown>>(spec: { [K in keyof T]: Parser<T[K]> }, source: NodeJS.ProcessEnv = process.env): T {
  const out: Partial<T> = {};
  const problems: ConfigError[] = [];
  for (const name of Object.keys(spec) as (keyof T & string)[]) {
    try {
      out[name] = spec[name](source[name], name);
    } catch (err) {
      if (err instanceof ConfigError) problems.push(err);
      else throw err;
    }
  }
  if (problems.length === 1) throw problems[0];
  if (problems.length > 1) {
    throw new ConfigError(problems.map((p) => p.variable).join(", "), problems.map((p) => p.message).join("; "));
  }
  return out as T;
}

/** The deployment environments of SPEC §8. */
export const stewardEnvironments = ["development", "test", "staging", "production"] as const;
export type StewardEnv = (typeof stewardEnvironments)[number];

/** Variables every service shares (SPEC §8). */
export const commonConfig = {
  DATABASE_URL: env.url(["postgres", "postgresql"], "postgres://postgres@127.0.0.1:5432/steward"),
  /** One NATS server, or a cluster's seed servers separated by commas. */
  NATS_URL: env.urlList(["nats", "tls"], "nats://127.0.0.1:4222"),
  /** Replicas of each JetStream stream Steward creates (1, or 3/5 on a NATS cluster). */
  STEWARD_NATS_REPLICAS: env.int(1, 5, 1),
  /**
   * Unset means production: a deployment that forgets it gets every production check (key material, mutual
   * TLS, NATS users), never the development shortcuts. `npm start` sets development, the test suites test.
   */
  STEWARD_ENV: env.oneOf(stewardEnvironments, "production"),
  STEWARD_NATS_NAMESPACE: env.namespace(),
  LOG_LEVEL: env.oneOf(["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const, "info"),
  /** Connections this process may hold in its PostgreSQL pool. */
  PG_POOL_MAX: env.int(1, 500, 10),
};

/** Where a service serves `/healthz` and `/readyz` when its main port is not HTTP; port 0 picks a free one. */
export function healthConfig(defaultPort: number) {
  return {
    HEALTH_HOST: env.string("127.0.0.1"),
    HEALTH_PORT: env.port(defaultPort),
  };
}

import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { UsageError } from "./errors";

/** What `steward login` keeps: the token and, when given, the gateway's URL. */
export interface StoredConfig {
  readonly url?: string;
  readonly token?: string;
}

/** Where a setting came from (shown by `steward token --json`, never with the token in an error). */
export type Source = "flag" | "env" | "config" | "npm start" | "default" | "development";

export interface Settings {
  readonly url: string;
  readonly urlSource: Source;
  /** Absent when the token must still be minted (tokenSource "development") or there is none. */
  readonly token?: string;
  readonly tokenSource: Source | "none";
}

/** The repository this CLI belongs to (dist/ and src/ sit at the same depth). */
export const repositoryRoot = resolve(__dirname, "..", "..", "..");

/** Where `npm start` keeps its state: STEWARD_HOME, default <repository>/.steward. */
export function stewardHome(env: NodeJS.ProcessEnv): string {
  return env.STEWARD_HOME || join(repositoryRoot, ".steward");
}

/** The config file: $STEWARD_CONFIG, else $XDG_CONFIG_HOME/steward/config.json, else ~/.config/steward/config.json. */
export function configPath(env: NodeJS.ProcessEnv): string {
  if (env.STEWARD_CONFIG) return env.STEWARD_CONFIG;
  return join(env.XDG_CONFIG_HOME || join(homedir(), ".config"), "steward", "config.json");
}

/** The stored config; empty when there is no file. A file that is not a JSON object is a usage error naming the file. */
export function readStoredConfig(path: string): StoredConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return {};
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`${path} is not JSON: fix it or run \`steward login\` again`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new UsageError(`${path} must hold a JSON object`);
  const { url, token } = parsed as Record<string, unknown>;
  return { ...(typeof url === "string" ? { url } : {}), ...(typeof token === "string" ? { token } : {}) };
}

/** Writes the config file readable by this user only (it holds a token), atomically. */
export function writeStoredConfig(path: string, config: StoredConfig): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

/** The gateway address `npm start` recorded in <home>/run/services.json, if it runs. */
export function recordedGatewayUrl(home: string): string | undefined {
  try {
    const record = JSON.parse(readFileSync(join(home, "run", "services.json"), "utf8")) as { services?: { gateway?: { addr?: unknown } } };
    const addr = record.services?.gateway?.addr;
    return typeof addr === "string" && /^https?:\/\//.test(addr) ? addr : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The URL and token to use, by precedence: --url, STEWARD_URL, the config file, the gateway `npm start`
 * recorded, http://127.0.0.1:$GATEWAY_PORT (8080); STEWARD_TOKEN, the config file, and else a development
 * token minted on the spot when a development signing secret is at hand.
 */
export function resolveSettings(input: {
  readonly flagUrl?: string;
  readonly env: NodeJS.ProcessEnv;
  readonly stored: StoredConfig;
  readonly recordedUrl?: string;
  readonly developmentSecretAvailable: boolean;
}): Settings {
  const { env, stored } = input;
  const [url, urlSource]: [string, Source] = input.flagUrl
    ? [input.flagUrl, "flag"]
    : env.STEWARD_URL
      ? [env.STEWARD_URL, "env"]
      : stored.url
        ? [stored.url, "config"]
        : input.recordedUrl
          ? [input.recordedUrl, "npm start"]
          : [`http://127.0.0.1:${env.GATEWAY_PORT || 8080}`, "default"];
  const base = { url: url.replace(/\/+$/, ""), urlSource };
  if (env.STEWARD_TOKEN) return { ...base, token: env.STEWARD_TOKEN, tokenSource: "env" };
  if (stored.token) return { ...base, token: stored.token, tokenSource: "config" };
  return { ...base, tokenSource: input.developmentSecretAvailable ? "development" : "none" };
}

/** A URL fit to print: without any user:password part. */
export function printableUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    return u.toString().replace(/\/$/, "");
  } catch {
    return "(the configured URL)";
  }
}

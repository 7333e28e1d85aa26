import { ConfigError, env, type StewardEnv } from "../config";
import type { ServiceIdentity } from "../identities";
import type { NatsConnectOptions } from "./connect";

/** A service's NATS user (SPEC §10: one per service, with subject permissions). Required outside development and test. */
export const natsAuthConfig = {
  NATS_USER: env.optional(),
  NATS_PASSWORD: env.optional(),
};

/** The inbox prefix of a service's connection: its NATS user may subscribe to its own replies only. */
export function natsInboxPrefix(self: ServiceIdentity): string {
  return `_INBOX_${self}`;
}

/**
 * The connection options of `self` on NATS: its user and password, and its own inbox prefix. Both or neither;
 * neither only in development and test (the shared NATS of a developer's machine has no users), or when
 * NATS_URL carries the credentials itself.
 */
export function natsAuth(
  config: { readonly STEWARD_ENV: StewardEnv; readonly NATS_URL: string; readonly NATS_USER?: string; readonly NATS_PASSWORD?: string },
  self: ServiceIdentity,
): Pick<NatsConnectOptions, "user" | "pass" | "inboxPrefix"> {
  const { NATS_USER: user, NATS_PASSWORD: pass } = config;
  if (user && pass) return { user, pass, inboxPrefix: natsInboxPrefix(self) };
  if (user || pass) throw new ConfigError(user ? "NATS_PASSWORD" : "NATS_USER", "is missing: set NATS_USER and NATS_PASSWORD together");
  const inUrl = config.NATS_URL.split(",").some((seed) => new URL(seed.trim()).username !== "");
  if (inUrl) return { inboxPrefix: natsInboxPrefix(self) };
  if (config.STEWARD_ENV === "development" || config.STEWARD_ENV === "test") return {};
  throw new ConfigError("NATS_USER, NATS_PASSWORD", `is required when STEWARD_ENV is ${config.STEWARD_ENV}: each service connects to NATS as its own user`);
}

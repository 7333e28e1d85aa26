import pino, { type Logger } from "pino";
import { CENSOR, redactDeep } from "./redact";

export type { Logger };

/** Top-level and shallow paths for what serializers produce (a request's headers, say) after the deep pass. */
const serializedPaths = ["authorization", "cookie", "token", "apiKey", "password", "secret", "prompt", "input"].flatMap((name) => [
  name,
  `*.${name}`,
  `*.headers.${name}`,
]);

/** An error as pino's serializer writes it, as a plain object with its fields (and its causes') redacted. */
function serializeError(err: unknown): unknown {
  const serialized = pino.stdSerializers.err(err as Error) as unknown;
  if (serialized === null || typeof serialized !== "object") return serialized;
  const plain: Record<string, unknown> = { ...(serialized as Record<string, unknown>) };
  if (plain.cause !== undefined && typeof plain.cause === "object") plain.cause = serializeError(plain.cause);
  return redactDeep(plain);
}

/**
 * Structured JSON logs. Fields that could carry a secret, a prompt or a provider's words are redacted at any
 * depth of the logged object (`redactDeep`: credentials, tokens, keys, passwords, prompts, inputs, and the
 * password of a URL), in errors and their causes too, so an accidental `log.info({ config })` stays safe.
 * Logs go to stdout unless a `destination` is given.
 */
export function createLogger(service: string, level = "info", destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    name: service,
    level,
    base: { service },
    formatters: {
      log: (object) => redactDeep(object) as Record<string, unknown>,
      bindings: (bindings) => redactDeep(bindings) as Record<string, unknown>,
    },
    serializers: { err: serializeError },
    redact: { paths: serializedPaths, censor: CENSOR },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return destination ? pino(options, destination) : pino(options);
}

import pino, { type Logger } from "pino";

export type { Logger };

/**
 * Structured JSON logs. Fields that could carry a secret, a prompt or a provider's words are redacted
 * wherever they appear, so an accidental `log.info({ req })` stays safe.
 */
export function createLogger(service: string, level = "info"): Logger {
  return pino({
    name: service,
    level,
    base: { service },
    redact: {
      paths: [
        "authorization",
        "*.authorization",
        "headers.authorization",
        "*.headers.authorization",
        "token",
        "*.token",
        "apiKey",
        "*.apiKey",
        "prompt",
        "*.prompt",
        "input",
        "*.input",
      ],
      censor: "[redacted]",
    },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}

/** What a redacted value is replaced with. */
export const CENSOR = "[redacted]";

/** Deeper than this, a plain object is censored whole rather than walked (a log line is never that deep). */
const MAX_DEPTH = 12;

/**
 * Names (compared without case, `-` or `_`) whose values are never logged: credentials of any kind, and a
 * prompt or a user's input. `…tokens` (usage counts such as `input_tokens`) are not credentials.
 */
const sensitiveName = /(authorization|cookie|password|passwd|passphrase|secret|privatekey|apikey|accesskey|credentials?|token)$|^(prompt|input|nkey|seed)$/;

export function isSensitiveKey(key: string): boolean {
  return sensitiveName.test(key.toLowerCase().replace(/[^a-z0-9]/g, ""));
}

/** `scheme://user:password@host…` → the password censored; any other text unchanged. */
const urlPassword = /^([a-z][a-z0-9+.-]*:\/\/[^/?#@\s:]*):[^/?#@\s]+@/i;

function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * A copy of `value` with every sensitive field censored at any depth of plain objects and arrays, and the
 * password of any URL-shaped string removed. Class instances (an Error, a request) are left to their
 * serializers and returned as they are; the input is never modified.
 */
export function redactDeep(value: unknown, depth = 0, seen: WeakSet<object> = new WeakSet()): unknown {
  if (typeof value === "string") return urlPassword.test(value) ? value.replace(urlPassword, `$1:${CENSOR}@`) : value;
  if (value === null || typeof value !== "object") return value;
  if (!Array.isArray(value) && !isPlain(value)) return value;
  if (seen.has(value)) return "[circular]";
  if (depth >= MAX_DEPTH) return CENSOR;
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((item) => redactDeep(item, depth + 1, seen));
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      out[key] = isSensitiveKey(key) && item !== undefined && item !== null ? CENSOR : redactDeep(item, depth + 1, seen);
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

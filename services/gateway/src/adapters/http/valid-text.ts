/** A lone UTF-16 surrogate, or NUL: text PostgreSQL cannot store and no client meant to send. */
const INVALID = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|\u0000/;

/** What a walk of a parsed JSON value finds first: arrays and objects nested past the bound, or invalid text. */
export type JsonFault = { readonly kind: "too_deep" } | { readonly kind: "invalid_text"; readonly at: string };

/**
 * The first fault of a parsed JSON value, or null: nesting of arrays and objects more than `maxDepth` levels
 * deep (code that walks a value recursively — canonical JSON, fingerprints — then never meets a depth a client
 * chose), or a key or string holding invalid text, named by its JSON pointer. One walk, without recursion, so
 * that any nesting depth is safe.
 */
export function findJsonFault(value: unknown, maxDepth = Infinity): JsonFault | null {
  const pending: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: "", depth: 0 }];
  while (pending.length > 0) {
    const { value: current, path, depth } = pending.pop()!;
    if (typeof current === "string") {
      if (INVALID.test(current)) return { kind: "invalid_text", at: path || "/" };
      continue;
    }
    if (current === null || typeof current !== "object") continue;
    if (depth + 1 > maxDepth) return { kind: "too_deep" };
    if (Array.isArray(current)) {
      current.forEach((item, i) => pending.push({ value: item, path: `${path}/${i}`, depth: depth + 1 }));
      continue;
    }
    for (const [key, item] of Object.entries(current)) {
      const at = `${path}/${escapePointer(key)}`;
      if (INVALID.test(key)) return { kind: "invalid_text", at };
      pending.push({ value: item, path: at, depth: depth + 1 });
    }
  }
  return null;
}

/** The path of the first key or string in a parsed JSON value holding invalid text, or null when all of it is storable. */
export function findInvalidText(value: unknown): string | null {
  const fault = findJsonFault(value);
  return fault?.kind === "invalid_text" ? fault.at : null;
}

// JSON Pointer escaping; a key with invalid text is named by its escaped form only up to what is printable.
function escapePointer(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1").replace(INVALID_GLOBAL, "\uFFFD");
}

const INVALID_GLOBAL = new RegExp(INVALID.source, "g");

/** A lone UTF-16 surrogate, or NUL: text PostgreSQL cannot store and no client meant to send. */
const INVALID = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|\u0000/;

/**
 * The path of the first key or string in a parsed JSON value holding invalid text, or null when all of it is
 * storable. Walks without recursion so that any nesting depth is safe.
 */
export function findInvalidText(value: unknown): string | null {
  const pending: Array<{ value: unknown; path: string }> = [{ value, path: "" }];
  while (pending.length > 0) {
    const { value: current, path } = pending.pop()!;
    if (typeof current === "string") {
      if (INVALID.test(current)) return path || "/";
    } else if (Array.isArray(current)) {
      current.forEach((item, i) => pending.push({ value: item, path: `${path}/${i}` }));
    } else if (current !== null && typeof current === "object") {
      for (const [key, item] of Object.entries(current)) {
        const at = `${path}/${escapePointer(key)}`;
        if (INVALID.test(key)) return at;
        pending.push({ value: item, path: at });
      }
    }
  }
  return null;
}

// JSON Pointer escaping; a key with invalid text is named by its escaped form only up to what is printable.
function escapePointer(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1").replace(INVALID_GLOBAL, "\uFFFD");
}

const INVALID_GLOBAL = new RegExp(INVALID.source, "g");

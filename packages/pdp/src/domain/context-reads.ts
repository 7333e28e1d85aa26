/**
 * Which attributes of a request's `context` a policy set can read, found in its text: a set that never names an
 * attribute gives the same answer whatever its value (for values of the same type: Cedar checks each against the
 * schema first). `"whole"` when the set uses `context` in any other way (compares it, passes it on, or the
 * scanner cannot tell): then every attribute counts.
 *
 * Reads are recognised only as `context.name`, `context["name"]` and `context has name` (or `has "name"`).
 * The scan errs one way only: a word `context` that is not the request's (an attribute named so, a record key)
 * adds a read or makes it `"whole"`, which costs remembered answers, never a wrong one.
 */
export type ContextReads = ReadonlySet<string> | "whole";

/** A string literal holding an escape is `escaped`: its text here is not the value Cedar reads. */
type Token = { readonly kind: "word" | "string" | "mark"; readonly text: string; readonly escaped?: boolean };

const WORD = /[A-Za-z_][A-Za-z0-9_]*/y;

/** Cedar's words, string literals and single marks, without whitespace and `//` comments. */
function tokens(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (/\s/.test(c)) {
      i++;
    } else if (c === "/" && text[i + 1] === "/") {
      const end = text.indexOf("\n", i);
      i = end === -1 ? text.length : end + 1;
    } else if (c === '"') {
      let value = "";
      let escaped = false;
      let j = i + 1;
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === "\\") {
          escaped = true;
          j++;
        }
        value += text[j] ?? "";
      }
      out.push({ kind: "string", text: value, escaped });
      i = j + 1;
    } else if (/[A-Za-z_]/.test(c)) {
      WORD.lastIndex = i;
      const word = WORD.exec(text)![0];
      out.push({ kind: "word", text: word });
      i += word.length;
    } else {
      out.push({ kind: "mark", text: c });
      i++;
    }
  }
  return out;
}

const is = (token: Token | undefined, kind: Token["kind"], text?: string) => token?.kind === kind && (text === undefined || token.text === text);

/** The attribute a `context` at `at` reads, or null when it is used otherwise. */
function readAt(all: readonly Token[], at: number): string | null {
  const [next, name, after] = [all[at + 1], all[at + 2], all[at + 3]];
  if (!next || !name || name.escaped) return null;
  // `context.name(…)` would be a method of the record itself, not an attribute.
  if (is(next, "mark", ".") && is(name, "word") && !is(after, "mark", "(")) return name.text;
  if (is(next, "mark", "[") && is(name, "string") && is(after, "mark", "]")) return name.text;
  if (is(next, "word", "has") && (is(name, "word") || is(name, "string"))) return name.text;
  return null;
}

export function contextReads(policies: Iterable<string>): ContextReads {
  const reads = new Set<string>();
  for (const policy of policies) {
    const all = tokens(policy);
    for (let i = 0; i < all.length; i++) {
      if (!is(all[i], "word", "context")) continue;
      const name = readAt(all, i);
      if (name === null) return "whole";
      reads.add(name);
    }
  }
  return reads;
}

/** The kind of a value any value of which Cedar takes alike for a type (string, Bool, Long), else null. */
function plainKind(value: unknown): string | null {
  if (typeof value === "string" || typeof value === "boolean") return typeof value;
  if (typeof value === "number" && Number.isSafeInteger(value)) return "integer";
  return null;
}

/**
 * The part of a context an answer can depend on: the values of the attributes read, and of the others only
 * their kind (Cedar refuses a value of the wrong type whether or not a policy reads it). An attribute of any
 * other value (a fraction, a record) counts by its value. This holds for the schema's context types, String,
 * Bool and Long (infra/policies/schema.cedarschema): an attribute of an extension type, whose string Cedar
 * parses, would have to count by its value.
 */
export function contextAsRead(context: Readonly<Record<string, unknown>>, reads: ContextReads): unknown {
  if (reads === "whole") return context;
  const values: Record<string, unknown> = {};
  const kinds: Record<string, string> = {};
  for (const [name, value] of Object.entries(context)) {
    const kind = reads.has(name) ? null : plainKind(value);
    if (kind === null) values[name] = value;
    else kinds[name] = kind;
  }
  return { values, kinds };
}

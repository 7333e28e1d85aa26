import { tokens, type Token } from "./cedar-tokens";

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

/**
 * Cutting a JSON value down while keeping its shape: texts keep their first characters, lists and objects
 * their first items, each cut marked where it happened. `sizeModelOf` predicts the size of a cut without
 * making it, so that the right cut can be searched for cheaply in a large value.
 */

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), "utf8");

/** Printable ASCII without `"` or `\`: its JSON is the text itself between quotes, one byte a character. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** Where a text of `length` characters is cut to keep at most `max`: never between the halves of a surrogate pair. */
function cutEnd(text: string, max: number): number {
  const last = text.charCodeAt(max - 1);
  return last >= 0xd800 && last <= 0xdbff ? max - 1 : max;
}

const textMarker = (cut: number, length: number) => `… [cut: ${cut} of ${length} characters]`;
const listMarker = (cut: number, length: number) => `… [cut: ${cut} more of ${length} items]`;
const fieldMarker = (cut: number, length: number) => `[cut: ${cut} more of ${length} fields]`;
/** The key that holds an object's cut marker. */
const CUT_KEY = "…";

/** Keeps the first `max` characters (whole surrogate pairs only) and says how many went. */
export function cutText(text: string, max: number): string {
  if (typeof text !== "string" || text.length <= max) return text;
  const end = cutEnd(text, max);
  return `${text.slice(0, end)}${textMarker(text.length - end, text.length)}`;
}

/** A copy with every text at most `textChars` long and every list or object at most `items` long, each cut marked. */
export function cutValue(value: unknown, textChars: number, items: number): unknown {
  if (typeof value === "string") return cutText(value, textChars);
  if (Array.isArray(value)) {
    const kept = value.slice(0, items).map((v) => cutValue(v, textChars, items));
    if (value.length > items) kept.push(listMarker(value.length - items, value.length));
    return kept;
  }
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>);
    const out: Record<string, unknown> = {};
    for (const [k, v] of entries.slice(0, items)) out[k] = cutValue(v, textChars, items);
    if (entries.length > items) out[CUT_KEY] = fieldMarker(entries.length - items, entries.length);
    return out;
  }
  return value;
}

type Node =
  | { readonly kind: "text"; readonly text: string; readonly bytes: number; readonly plain: boolean }
  | { readonly kind: "list"; readonly items: readonly Node[] }
  | { readonly kind: "map"; readonly entries: ReadonlyArray<{ readonly keyBytes: number; readonly value: Node }> }
  | { readonly kind: "atom"; readonly bytes: number };

/** Predicts `jsonBytes(cutValue(value, textChars, items))` for a plain JSON value, without the copy. */
export interface SizeModel {
  /** Characters of the longest text in the value. */
  readonly longestText: number;
  /** Items of the longest list (or fields of the widest object) in the value. */
  readonly longestList: number;
  bytes(textChars: number, items: number): number;
}

/** The size model of a plain JSON value (as JSON.parse returns: no undefined, no Date). Built in one pass. */
export function sizeModelOf(value: unknown): SizeModel {
  let longestText = 0;
  let longestList = 0;
  const build = (v: unknown): Node => {
    if (typeof v === "string") {
      longestText = Math.max(longestText, v.length);
      const plain = PLAIN.test(v);
      return { kind: "text", text: v, plain, bytes: plain ? v.length + 2 : jsonBytes(v) };
    }
    if (Array.isArray(v)) {
      longestList = Math.max(longestList, v.length);
      return { kind: "list", items: v.map(build) };
    }
    if (v !== null && typeof v === "object") {
      const entries = Object.entries(v as Record<string, unknown>);
      longestList = Math.max(longestList, entries.length);
      // A key and its colon.
      return { kind: "map", entries: entries.map(([k, x]) => ({ keyBytes: jsonBytes(k) + 1, value: build(x) })) };
    }
    return { kind: "atom", bytes: jsonBytes(v) };
  };
  const root = build(value);

  const sizeOf = (node: Node, textChars: number, items: number): number => {
    switch (node.kind) {
      case "atom":
        return node.bytes;
      case "text": {
        if (node.text.length <= textChars) return node.bytes;
        const end = cutEnd(node.text, textChars);
        const marker = textMarker(node.text.length - end, node.text.length);
        // The marker is plain but for its "…" (3 bytes in UTF-8, one character).
        return node.plain ? end + 2 + marker.length + 2 : jsonBytes(cutText(node.text, textChars));
      }
      case "list": {
        const kept = Math.min(node.items.length, items);
        let bytes = 2 + Math.max(0, kept - 1);
        for (let i = 0; i < kept; i++) bytes += sizeOf(node.items[i], textChars, items);
        if (node.items.length > kept) bytes += (kept > 0 ? 1 : 0) + jsonBytes(listMarker(node.items.length - kept, node.items.length));
        return bytes;
      }
      case "map": {
        const kept = Math.min(node.entries.length, items);
        let bytes = 2 + Math.max(0, kept - 1);
        for (let i = 0; i < kept; i++) bytes += node.entries[i].keyBytes + sizeOf(node.entries[i].value, textChars, items);
        if (node.entries.length > kept) {
          bytes += (kept > 0 ? 1 : 0) + jsonBytes(CUT_KEY) + 1 + jsonBytes(fieldMarker(node.entries.length - kept, node.entries.length));
        }
        return bytes;
      }
      default: {
        const never: never = node;
        return never;
      }
    }
  };
  return { longestText, longestList, bytes: (textChars, items) => sizeOf(root, textChars, items) };
}

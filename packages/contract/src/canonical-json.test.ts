import { canonicalJson } from "./canonical-json";

/** The recursive form fingerprints were recorded with: the iterative one must write exactly what it wrote. */
function recursive(value: unknown): string {
  if (value === null || typeof value === "boolean") return JSON.stringify(value);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError("non-finite number has no canonical form");
    return JSON.stringify(value);
  }
  if (typeof value === "string") return JSON.stringify(value.normalize("NFC"));
  if (Array.isArray(value)) return `[${value.map(recursive).join(",")}]`;
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k.normalize("NFC"), v] as const)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${recursive(v)}`).join(",")}}`;
  }
  throw new TypeError(`${typeof value} has no JSON form`);
}

/** A seeded generator of JSON-like values: every kind, odd keys and strings, some undefined members. */
function values(seed: number, count: number): unknown[] {
  let s = seed;
  const next = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
  const strings = ["", "a", "é", "e\u0301", "Å", "A\u030a", "😀", "\u0000", '"\\', "z", "Z", "10", "2"];
  const make = (depth: number): unknown => {
    const r = next();
    if (depth > 4 || r < 0.3) return [null, true, false, 0, -1.5, 1e21, 42, strings[Math.floor(next() * strings.length)]][Math.floor(next() * 8)];
    if (r < 0.6) return Array.from({ length: Math.floor(next() * 4) }, () => make(depth + 1));
    const o: Record<string, unknown> = {};
    for (let i = Math.floor(next() * 5); i > 0; i--) o[strings[Math.floor(next() * strings.length)]] = next() < 0.1 ? undefined : make(depth + 1);
    return o;
  };
  return Array.from({ length: count }, () => make(0));
}

describe("canonical JSON", () => {
  it("writes exactly what the recursive form wrote, for 2,000 generated values", () => {
    for (const v of values(7, 2000)) expect(canonicalJson(v)).toBe(recursive(v));
  });

  it("sorts keys, normalises strings and keys to NFC, drops undefined members", () => {
    expect(canonicalJson({ b: 1, a: ["e\u0301", { d: undefined, c: null }] })).toBe('{"a":["é",{"c":null}],"b":1}');
  });

  it("refuses what has no JSON form, as before", () => {
    for (const bad of [Number.NaN, Infinity, [undefined], { a: () => 1 }, BigInt(1)]) expect(() => canonicalJson(bad)).toThrow(TypeError);
  });

  it("writes a value nested 100,000 levels deep, which the recursive form could not", () => {
    let deep: unknown = "x";
    for (let i = 0; i < 100_000; i++) deep = i % 2 ? { k: deep } : [deep];
    expect(() => recursive(deep)).toThrow(RangeError);
    const text = canonicalJson(deep);
    expect(text.length).toBe(100_000 + 3 + 50_000 * 6);
    expect(text.startsWith('{"k":[{"k":[')).toBe(true);
  });
});

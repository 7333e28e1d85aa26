import type { Rng } from "./prng";
import { fuzzKey, fuzzString, fuzzValue, oddJsonText } from "./values";

/** A body as sent, and what was done to it (for the report). */
export interface FuzzBody {
  readonly bytes: Buffer;
  readonly contentType: string | undefined;
  readonly mutation: string;
}

const CONTENT_TYPES: readonly (string | undefined)[] = [
  undefined,
  "",
  "application/json; charset=utf-8",
  "application/json;charset=latin1",
  "APPLICATION/JSON",
  "application/json;",
  'application/json; boundary="',
  "application/json, text/plain",
  "application/jsonx",
  "application/problem+json",
  "application/merge-patch+json",
  "text/json",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/octet-stream",
  "*/*",
];

/** Bends a body the route accepts (or sends one where none is expected): types, keys, text, size, bytes. */
export function fuzzBody(rng: Rng, valid: unknown): FuzzBody {
  const json = (value: unknown, mutation: string) => ({ bytes: Buffer.from(JSON.stringify(value) ?? "null", "utf8"), mutation });
  const object = valid !== null && typeof valid === "object" && !Array.isArray(valid) ? (valid as Record<string, unknown>) : {};
  const keys = Object.keys(object);
  const made = rng.weighted<() => { bytes: Buffer; mutation: string }>([
    [8, () => json(valid ?? {}, "as the route accepts it")],
    [
      6,
      () => {
        const key = keys.length ? rng.pick(keys) : fuzzKey(rng);
        return json({ ...object, [key]: fuzzString(rng) }, `${key}: hostile text`);
      },
    ],
    [
      5,
      () => {
        const key = keys.length ? rng.pick(keys) : fuzzKey(rng);
        return json({ ...object, [key]: fuzzValue(rng, 3) }, `${key}: any JSON value`);
      },
    ],
    [
      3,
      () => {
        const copy = { ...object };
        const key = keys.length ? rng.pick(keys) : "";
        delete copy[key];
        return json(copy, `without ${key}`);
      },
    ],
    [
      3,
      () => {
        const key = fuzzKey(rng);
        // JSON.stringify would drop an own "__proto__" made by a literal; defineProperty keeps it as data.
        const copy = { ...object };
        Object.defineProperty(copy, key, { value: fuzzValue(rng, 2), enumerable: true, writable: true, configurable: true });
        return json(copy, `extra key ${JSON.stringify(key).slice(0, 40)}`);
      },
    ],
    [2, () => json(fuzzValue(rng, 3), "not an object")],
    [4, () => ({ bytes: Buffer.from(oddJsonText(rng), "utf8"), mutation: "odd JSON text" })],
    [1, () => oversized(rng, object)],
    [1, () => invalidUtf8(rng, object)],
  ])();
  const contentType = rng.chance(0.12) ? rng.pick(CONTENT_TYPES) : "application/json";
  const mutation = contentType === "application/json" ? made.mutation : `${made.mutation}; content-type ${JSON.stringify(contentType)}`;
  return { ...made, contentType, mutation };
}

/**
 * Over the 256 KiB limit, or just under it. Not far over: the gateway answers 413 and closes before reading
 * the rest, and a client still writing megabytes then fails on the closed socket without reading the answer.
 */
function oversized(rng: Rng, object: Record<string, unknown>): { bytes: Buffer; mutation: string } {
  const size = rng.pick([256 * 1024 - 64, 256 * 1024 + 1, 300 * 1024]);
  const key = Object.keys(object)[0] ?? "input";
  const text = JSON.stringify({ ...object, [key]: "" });
  const padded = text.replace(`"${key}":""`, `"${key}":"${"z".repeat(Math.max(0, size - text.length))}"`);
  return { bytes: Buffer.from(padded, "utf8"), mutation: `about ${Math.round(size / 1024)} KiB` };
}

/** Bytes that are not UTF-8: a raw lone surrogate encoding, a stray continuation byte, Latin-1, an overlong slash. */
function invalidUtf8(rng: Rng, object: Record<string, unknown>): { bytes: Buffer; mutation: string } {
  const key = Object.keys(object)[0] ?? "input";
  const bad = rng.pick([[0xed, 0xa0, 0x80], [0x80], [0xff, 0xfe], [0xe9], [0xc0, 0xaf], [0xf4, 0x90, 0x80, 0x80]]);
  const bytes = Buffer.concat([Buffer.from(`{"${key}":"a`), Buffer.from(bad), Buffer.from('b"}')]);
  return { bytes, mutation: `invalid UTF-8 ${Buffer.from(bad).toString("hex")}` };
}

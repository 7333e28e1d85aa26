import { encodeURIComponentSafe } from "./segments";
import type { Rng } from "./prng";
import { fuzzString } from "./values";

/** Methods a client may send on any path; fetch refuses CONNECT, TRACE and TRACK, the raw requests send others. */
export const ODD_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "PROPFIND", "fuzz"] as const;

/** Query values a route refuses: out of range, not digits, huge, invalid encodings. */
const BAD_QUERY_VALUES = [
  ...["", "0", "-1", "01", "1.5", " 1", "1e3", "0x10", "abc", "101", "1001", "9".repeat(30), "created_at asc", "a".repeat(5000)],
  ...["😀", "%00", "%zz", "%E0%A4%A", "%ED%A0%80"],
];

/** A query string: the route's own keys (as given or bent), unknown keys, repeated keys, odd separators. */
export function fuzzQuery(rng: Rng, valid: Record<string, string>): { query: string; mutation: string } {
  const pairs: Array<[string, string]> = Object.entries(valid).map(([k, v]) => [k, encodeURIComponentSafe(v)]);
  const mutation = rng.weighted<() => string>([
    [10, () => "as the route accepts it"],
    [
      4,
      () => {
        const key = pairs.length ? rng.pick(pairs)[0] : rng.pick(["page", "after", "limit"]);
        const value = rng.chance(0.7) ? rng.pick(BAD_QUERY_VALUES) : encodeURIComponentSafe(fuzzString(rng));
        // Either replacing the route's value or added beside it (a repeated key): refused or served, never a 5xx.
        const replace = rng.chance(0.5);
        if (replace) for (let i = pairs.length - 1; i >= 0; i--) if (pairs[i][0] === key) pairs.splice(i, 1);
        pairs.push([key, value]);
        return `${replace ? "" : "added "}${key}=${value.slice(0, 40)}`;
      },
    ],
    [
      2,
      () => {
        const key = rng.pick(["x", "__proto__", "constructor", "page[]", "a[b]", "", "%00", encodeURIComponentSafe(fuzzString(rng)).slice(0, 300)]);
        pairs.push([key, "1"]);
        return `unknown key ${key.slice(0, 40)}`;
      },
    ],
    [
      2,
      () => {
        const [key, value] = pairs.length ? rng.pick(pairs) : ["page", "1"];
        pairs.push([key, value]);
        return `repeated ${key}`;
      },
    ],
    [
      1,
      () => {
        for (let i = 0; i < 500; i++) pairs.push([`k${i}`, String(i)]);
        return "500 keys";
      },
    ],
  ])();
  let query = pairs.map(([k, v]) => `${k}=${v}`).join("&");
  if (rng.chance(0.05)) query = rng.pick(["&&&", "=", "=1", "a", "?", "&page", "page=1;page_size=2", "%", "+", `${query}&`, `&${query}`]);
  return { query, mutation };
}

const ACCEPTS = [
  "text/event-stream",
  "*/*",
  "application/json",
  "text/event-stream;q=0",
  "application/json, text/event-stream",
  "text/html",
  "",
  "TEXT/EVENT-STREAM",
];
const LAST_EVENT_IDS = ["0", "1", "3", "999999999", "1000000000", "-1", "abc", "1.0", " 2", "", "0x10", "01", "9".repeat(400), "\xff"];
const TRACEPARENTS = [
  "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
  "00-00000000000000000000000000000000-0000000000000000-00",
  "ff-x-y-z",
  "z".repeat(4000),
];

/** Extra headers: event-stream negotiation, resume points, keys, trace context, spoofed addresses, size. */
export function fuzzHeaders(rng: Rng): { headers: Record<string, string>; mutation: string } {
  const pick = rng.weighted<() => [Record<string, string>, string]>([
    [3, () => [{ accept: rng.pick(ACCEPTS) }, "accept"]],
    [3, () => [{ accept: "text/event-stream", "last-event-id": rng.pick(LAST_EVENT_IDS) }, "last-event-id"]],
    [2, () => [{ "idempotency-key": rng.pick(["k-1", "k-1", "", " ", "\xfc", "x".repeat(255), "x".repeat(256), "a b", "{}"]) }, "idempotency-key"]],
    [1, () => [{ "elevation-session": rng.pick(["00000000-0000-0000-0000-000000000000", "abc", "", "x".repeat(100)]) }, "elevation-session"]],
    [1, () => [{ traceparent: rng.pick(TRACEPARENTS) }, "traceparent"]],
    [1, () => [{ "x-forwarded-for": "10.0.0.1, 203.0.113.9", forwarded: "for=203.0.113.9", "x-real-ip": "203.0.113.9" }, "spoofed address"]],
    [1, () => [{ "x-fuzz": "h".repeat(rng.pick([8_000, 20_000, 70_000])) }, "huge header"]],
    [1, () => [Object.fromEntries(Array.from({ length: rng.pick([100, 300]) }, (_, i) => [`x-f${i}`, String(i)])), "many headers"]],
    [1, () => [{ "content-encoding": rng.pick(["gzip", "br", "deflate", "identity", "x-fuzz"]) }, "content-encoding"]],
    [1, () => [{ "x-http-method-override": "DELETE", "x-original-url": "/v1/admin/status" }, "method override"]],
    [1, () => [{ cookie: "session=\xff; a=b".repeat(rng.int(1, 50)), range: "bytes=0-1", "if-none-match": "*" }, "cookie, range"]],
  ]);
  const [headers, mutation] = pick();
  return { headers, mutation };
}

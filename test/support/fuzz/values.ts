import type { Rng } from "./prng";

/** Strings a client may send by mistake or on purpose: limits, invalid text, markup, injections. */
export const HOSTILE_STRINGS: readonly string[] = [
  "",
  " ",
  "\t\r\n ",
  "a",
  "x".repeat(4000),
  "x".repeat(4001),
  "é".repeat(4000),
  "😀".repeat(4000),
  "😀".repeat(4001),
  "\ud800",
  "\udfff",
  "ok \ud83d",
  "\ude00 tail",
  "a\u0000b",
  "\u0000",
  "\u202eevil\u202c",
  "\ufeffbom",
  "\u2028\u2029",
  "\x7f\x1b[31m",
  "Z̸̡̛̗̩͎a̷̧̛̝l̵̨̡g̶o̴",
  "<script>alert(1)</script>",
  "'; DROP TABLE runs; --",
  "$(rm -rf /)",
  "${jndi:ldap://x}",
  "{{7*7}}",
  "../../../../etc/passwd",
  "%00%2e%2e%2f",
  "null",
  "true",
  "-1",
  "NaN",
  "1e999",
  "agent",
  "ask",
  "approve",
  "reject",
  "created_at desc",
  "admin",
  "member",
  "0".repeat(64),
  "f".repeat(64),
];

/** Numbers at and past the limits JSON, JavaScript and PostgreSQL draw. */
export const HOSTILE_NUMBERS: readonly number[] = [
  0,
  -0,
  1,
  -1,
  0.5,
  1e-7,
  100,
  101,
  1000,
  1001,
  86_400,
  86_401,
  2 ** 31 - 1,
  2 ** 31,
  2 ** 32,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 63),
  1e308,
  -1e308,
];

/** A string, usually hostile, sometimes plain, sometimes long or random code units (lone surrogates included). */
export function fuzzString(rng: Rng): string {
  return rng.weighted<() => string>([
    [5, () => rng.pick(HOSTILE_STRINGS)],
    [2, () => `fuzz ${rng.int(0, 1e6)}`],
    [1, () => randomCodeUnits(rng, rng.int(1, 40))],
    [1, () => "y".repeat(rng.pick([255, 256, 257, 1000, 5000, 70_000]))],
  ])();
}

/** Any UTF-16 code units, so lone surrogates, NUL and controls turn up as often as letters. */
export function randomCodeUnits(rng: Rng, length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) {
    out += String.fromCharCode(
      rng.weighted([
        [4, rng.int(0x20, 0x7e)],
        [1, rng.int(0, 0x1f)],
        [1, rng.int(0x80, 0x7ff)],
        [1, rng.int(0xd800, 0xdfff)],
        [1, rng.int(0xe000, 0xffff)],
      ]),
    );
  }
  return out;
}

/** A JSON value of any type, nested up to `depth`. */
export function fuzzValue(rng: Rng, depth = 2): unknown {
  const leaf = depth <= 0;
  return rng.weighted<() => unknown>([
    [2, () => null],
    [1, () => rng.chance(0.5)],
    [3, () => rng.pick(HOSTILE_NUMBERS)],
    [5, () => fuzzString(rng)],
    [leaf ? 0 : 2, () => Array.from({ length: rng.int(0, 4) }, () => fuzzValue(rng, depth - 1))],
    [leaf ? 0 : 2, () => Object.fromEntries(Array.from({ length: rng.int(0, 4) }, () => [fuzzKey(rng), fuzzValue(rng, depth - 1)]))],
  ])();
}

/** Object keys: expected names, prototype-polluting names, invalid text. */
export function fuzzKey(rng: Rng): string {
  return rng.pick([
    "input",
    "mode",
    "answer",
    "decision",
    "policies",
    "user_id",
    "extra",
    "__proto__",
    "constructor",
    "prototype",
    "",
    "\ud800",
    "a\u0000",
    "k".repeat(300),
    fuzzString(rng),
  ]);
}

/** Raw JSON texts that are not what JSON.stringify would ever produce: invalid, deep, or odd but valid. */
export function oddJsonText(rng: Rng): string {
  const depth = rng.pick([64, 1000, 20_000, 100_000]);
  return rng.pick([
    "",
    " ",
    "{",
    "}",
    "{}",
    "[]",
    "null",
    "0",
    '"input"',
    "{'input': 'hi'}",
    '{"input": "hi",}',
    '{"input": "hi"} trailing',
    '{"input": "hi"}{"input": "again"}',
    '{"input": NaN}',
    '{"input": Infinity}',
    '{"input": "hi" /* comment */}',
    '{"input": "a", "input": null}',
    '{"__proto__": {"admin": true}, "input": "hi"}',
    '{"constructor": {"prototype": {"x": 1}}, "input": "hi"}',
    '{"input": "\\ud800"}',
    '{"input": "\\u0000"}',
    '{"input": "\\x41"}',
    '{"input": "bad \\q escape"}',
    '{"input": 1e999}',
    '{"input": 123456789012345678901234567890}',
    '{"input": -}',
    "\ufeff" + '{"input": "bom"}',
    "[".repeat(depth) + "]".repeat(depth),
    '{"a":'.repeat(Math.floor(depth / 10)) + "1" + "}".repeat(Math.floor(depth / 10)),
    '{"input": "' + "\\".repeat(2001) + '"}',
  ]);
}

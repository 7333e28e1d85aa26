import { sameWho, type FuzzFixture, type SeededDocument, type SeededRun } from "./fixture";
import type { Rng } from "./prng";
import { CORE_PRINCIPALS, type Who } from "./tokens";

/** A uuid that is not a seeded run's id, with its seed drawn from rng so the request can be generated again. */
export const seededUuid = (rng: Rng) => [8, 4, 4, 4, 12].map((n) => Array.from({ length: n }, () => rng.int(0, 15).toString(16)).join("")).join("-");

/** A path segment that is not a well-formed id: wrong shape, encoded separators, very long, bad encodings. */
export function oddSegment(rng: Rng): string {
  return rng.pick([
    "abc",
    "0",
    "-1",
    "%2F",
    "..%2F..%2Fadmin",
    "%2e%2e",
    "%00",
    "%zz",
    "%C0%AF",
    "%ED%A0%80",
    "%F0%9F%98%80",
    "~",
    "'",
    encodeURIComponent(seededUuid(rng)).toUpperCase(),
    `{${seededUuid(rng)}}`,
    `${seededUuid(rng)}x`,
    `${seededUuid(rng)}%20`,
    "a".repeat(rng.pick([64, 3000, 3100, 9000])),
    "%41".repeat(rng.pick([100, 1100])),
  ]);
}

/** A run's id (the principal's own, anybody's) or something like one; `control` leaves reserved runs out. */
export function runSegment(rng: Rng, fx: FuzzFixture, who: Who | undefined, control: boolean): { segment: string; run?: SeededRun } {
  const runs = control ? fx.runs.filter((r) => !r.reserved) : fx.runs;
  const own = runs.filter((r) => sameWho(r.owner, who));
  return rng.weighted<() => { segment: string; run?: SeededRun }>([
    [
      own.length ? 5 : 0,
      () => {
        const run = rng.pick(own);
        return { segment: run.id, run };
      },
    ],
    [
      8,
      () => {
        const run = rng.pick(runs);
        return { segment: run.id, run };
      },
    ],
    [1, () => ({ segment: seededUuid(rng) })],
    [
      1,
      () => {
        const run = rng.pick(runs);
        return { segment: rng.pick([run.id.toUpperCase(), encodeURIComponent(run.id), `${run.id}/`, `${run.id}%2F..`]), run };
      },
    ],
    [2, () => ({ segment: oddSegment(rng) })],
  ])();
}

export function documentSegment(rng: Rng, fx: FuzzFixture): { segment: string; document?: SeededDocument } {
  if (rng.chance(0.7)) {
    const document = rng.pick(fx.documents);
    return { segment: document.id, document };
  }
  return { segment: rng.chance(0.5) ? seededUuid(rng) : oddSegment(rng) };
}

export const versionSegment = (rng: Rng) => rng.pick(["1", "2", "3", "0", "-1", "01", "1e3", "999999999", "9999999999999", "abc", oddSegment(rng)]);

/** Users named in membership paths: other tenants' users, new names, odd text (raw, or already percent-encoded). */
export function userSegment(rng: Rng, mayBeCore: boolean): string {
  const raw = ["mallory", "eve", "zed", "bob", "ü😀", "x".repeat(256), "x".repeat(257), " ", "a/b", "\ud800"];
  if (mayBeCore) raw.push(...CORE_PRINCIPALS.map((p) => p.user));
  return rng.chance(0.8) ? encodeURIComponentSafe(rng.pick(raw)) : oddSegment(rng);
}

/** Dataset names: the seeded one, names that fit (but name no dataset), names that do not fit. */
export const datasetSegment = (rng: Rng) =>
  rng.pick(["fuzz_marked", "demo", "sales", "d".repeat(63), "d".repeat(64), "Demo", "1abc", "a-b", "%C3%A9", oddSegment(rng)]);

export const roleSegment = (rng: Rng) =>
  rng.pick(["reader", "auditor", "admin", "member", "ops.team:1", "-x", "x".repeat(65), "bad role", "%F0%9F%98%80", "%00", oddSegment(rng)]);

/** Percent-encodes; a lone surrogate becomes the (invalid) UTF-8 a careless client would send for it. */
export function encodeURIComponentSafe(value: string): string {
  return Array.from(value, (c) => (/^[\ud800-\udfff]$/.test(c) ? "%ED%A0%80" : encodeURIComponent(c))).join("");
}

/** A seeded source of choices: the same seed always yields the same sequence, so a failure can be replayed. */
export interface Rng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max], both included. */
  int(min: number, max: number): number;
  /** True with probability p. */
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** Picks by weight: `[[weight, value], …]`. */
  weighted<T>(items: ReadonlyArray<readonly [number, T]>): T;
}

/** mulberry32: tiny, fast and well spread over 32-bit seeds; not for secrets, only for reproducible tests. */
export function createRng(seed: number): Rng {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const rng: Rng = {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick: (items) => {
      if (items.length === 0) throw new RangeError("pick from an empty list");
      return items[Math.floor(next() * items.length)];
    },
    weighted: (items) => {
      const total = items.reduce((sum, [w]) => sum + w, 0);
      let at = next() * total;
      for (const [w, value] of items) {
        if (at < w) return value;
        at -= w;
      }
      return items[items.length - 1][1];
    },
  };
  return rng;
}

/** The seed of request `index` in a fuzz run seeded with `seed`: any one request can be generated on its own. */
export function requestSeed(seed: number, index: number): number {
  let h = (seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

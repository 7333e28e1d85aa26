/** Counts by key (open streams per user, sessions per tenant), forgetting a key whose count falls to zero. */
export interface Tally {
  of(key: string): number;
  add(key: string, n: number): void;
}

export function createTally(): Tally {
  const counts = new Map<string, number>();
  return {
    of: (key) => counts.get(key) ?? 0,
    add(key, n) {
      const next = (counts.get(key) ?? 0) + n;
      if (next > 0) counts.set(key, next);
      else counts.delete(key);
    },
  };
}

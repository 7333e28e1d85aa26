import { timeOrderedId } from "./time-ordered-id";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe("timeOrderedId", () => {
  it("is a lower-case UUID of version 7 and the RFC 9562 variant, its first 48 bits the time in ms", () => {
    const at = Date.UTC(2026, 11, 5, 14, 30, 0, 123);
    const id = timeOrderedId(at);
    expect(id).toMatch(UUID);
    expect(id[14]).toBe("7");
    expect("89ab").toContain(id[19]);
    expect(Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(at);
  });

  it("keeps 74 random bits: ids made in the same millisecond differ", () => {
    const at = 1_700_000_000_000;
    const ids = new Set(Array.from({ length: 10_000 }, () => timeOrderedId(at)));
    expect(ids.size).toBe(10_000);
    const tails = new Set([...ids].map((id) => id.slice(15)));
    expect(tails.size).toBe(10_000);
  });

  it("sorts by its time, as text, across milliseconds, the epoch's first and the last a v7 id can hold", () => {
    const times = [0, 1, 255, 256, 2 ** 40, 1_700_000_000_000, 1_700_000_000_001, 2 ** 48 - 1];
    const ids = times.map((t) => timeOrderedId(t));
    expect([...ids].sort()).toEqual(ids);
    expect(ids[0].slice(0, 13)).toBe("00000000-0000");
    expect(ids[ids.length - 1].slice(0, 13)).toBe("ffffffff-ffff");
  });

  it("takes the clock by default", () => {
    const before = Date.now();
    const id = timeOrderedId();
    const after = Date.now();
    const at = Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(after);
  });

  it("refuses a time it cannot hold", () => {
    for (const bad of [-1, 2 ** 48, 1.5, Number.NaN]) expect(() => timeOrderedId(bad)).toThrow(RangeError);
  });
});

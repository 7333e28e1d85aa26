import { createLru } from "./lru";

describe("createLru", () => {
  it("given a full cache, when a new key is set, then the least recently used entry is evicted and returned", () => {
    const lru = createLru<string, number>(2);
    expect(lru.set("a", 1)).toBeUndefined();
    expect(lru.set("b", 2)).toBeUndefined();
    expect(lru.get("a")).toBe(1); // "b" is now the oldest use
    expect(lru.set("c", 3)).toEqual({ key: "b", value: 2 });
    expect([lru.get("a"), lru.get("b"), lru.get("c"), lru.size]).toEqual([1, undefined, 3, 2]);
  });

  it("replacing a key does not evict another one", () => {
    const lru = createLru<string, number>(2);
    lru.set("a", 1);
    lru.set("b", 2);
    expect(lru.set("a", 10)).toBeUndefined();
    expect([lru.get("a"), lru.get("b")]).toEqual([10, 2]);
  });

  it("shift removes the oldest use; delete frees room", () => {
    const lru = createLru<string, number>(3);
    lru.set("a", 1);
    lru.set("b", 2);
    expect(lru.shift()).toEqual({ key: "a", value: 1 });
    expect(lru.delete("b")).toBe(true);
    expect(lru.size).toBe(0);
    expect(lru.shift()).toBeUndefined();
  });

  it("refuses a capacity below 1", () => {
    expect(() => createLru(0)).toThrow(/at least 1/);
    expect(() => createLru(1.5)).toThrow(/at least 1/);
  });
});

/** A map bounded to `capacity` entries that forgets the least recently used one first. */
export interface Lru<K, V> {
  readonly capacity: number;
  readonly size: number;
  /** The value, marked as the most recently used. */
  get(key: K): V | undefined;
  /** Stores the value as the most recently used; returns the entry evicted to make room, if any. */
  set(key: K, value: V): { key: K; value: V } | undefined;
  /** Removes and returns the least recently used entry. */
  shift(): { key: K; value: V } | undefined;
  delete(key: K): boolean;
}

/** A Map keeps insertion order, so re-inserting on every use keeps the oldest use first. */
export function createLru<K, V>(capacity: number): Lru<K, V> {
  if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`an LRU needs a capacity of at least 1 (got ${capacity})`);
  const entries = new Map<K, V>();

  function shift(): { key: K; value: V } | undefined {
    const first = entries.entries().next();
    if (first.done) return undefined;
    const [key, value] = first.value;
    entries.delete(key);
    return { key, value };
  }

  return {
    capacity,
    get size() {
      return entries.size;
    },
    get(key) {
      if (!entries.has(key)) return undefined;
      const value = entries.get(key) as V;
      entries.delete(key);
      entries.set(key, value);
      return value;
    },
    set(key, value) {
      entries.delete(key);
      const evicted = entries.size >= capacity ? shift() : undefined;
      entries.set(key, value);
      return evicted;
    },
    shift,
    delete: (key) => entries.delete(key),
  };
}

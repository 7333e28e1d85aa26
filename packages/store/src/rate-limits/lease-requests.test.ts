import { createPool, type Pool } from "@steward/platform";
import { leaseRequests, sweepRateLimitBuckets } from "./lease-requests";
import { freshDatabase } from "../../../../test/support/databases";
import { waitFor } from "../../../../test/support/wait-for";

describe("leaseRequests (the shared rate-limit counters in PostgreSQL)", () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: Pool;
  let other: Pool;

  beforeAll(async () => {
    db = await freshDatabase("steward_store_rate");
    pool = createPool(db.url, { max: 8 });
    // A second pool stands for a second gateway replica.
    other = createPool(db.url, { max: 8 });
  });

  afterAll(async () => {
    await other?.end();
    await pool?.end();
    if (db) await db.drop();
  });

  it("grants until the window's capacity is leased, whoever asks; then 0, with the time left in the window", async () => {
    const first = await leaseRequests(pool, 60, [{ bucket: "t:a", capacity: 10, want: 4 }]);
    expect(first).toMatchObject([{ bucket: "t:a", granted: 4, leased: 4, capacity: 10 }]);
    expect(first[0].windowEndsInMs).toBeGreaterThan(0);
    expect(first[0].windowEndsInMs).toBeLessThanOrEqual(60_000);
    // The window starts with the bucket's first lease: nearly the whole minute is left.
    expect(first[0].windowEndsInMs).toBeGreaterThan(50_000);

    const fromOther = await leaseRequests(other, 60, [{ bucket: "t:a", capacity: 10, want: 5 }]);
    expect(fromOther).toMatchObject([{ granted: 5, leased: 9 }]);
    const partial = await leaseRequests(pool, 60, [{ bucket: "t:a", capacity: 10, want: 5 }]);
    expect(partial).toMatchObject([{ granted: 1, leased: 10 }]);
    const none = await leaseRequests(other, 60, [{ bucket: "t:a", capacity: 10, want: 1 }]);
    expect(none).toMatchObject([{ granted: 0, leased: 10 }]);
    expect(none[0].windowStartMs).toBe(first[0].windowStartMs);
  });

  it("never grants more than the capacity to concurrent callers, and several buckets in any order never deadlock", async () => {
    const asks = Array.from({ length: 40 }, (_, i) =>
      leaseRequests(
        i % 2 ? pool : other,
        60,
        i % 3
          ? [
              { bucket: "t:b", capacity: 25, want: 1 },
              { bucket: "u:b", capacity: 1000, want: 1 },
            ]
          : [
              { bucket: "u:b", capacity: 1000, want: 1 },
              { bucket: "t:b", capacity: 25, want: 1 },
            ],
      ),
    );
    const grants = (await Promise.all(asks)).flat();
    expect(grants.filter((g) => g.bucket === "t:b").reduce((n, g) => n + g.granted, 0)).toBe(25);
    expect(grants.filter((g) => g.bucket === "u:b").reduce((n, g) => n + g.granted, 0)).toBe(40);
  });

  it("starts each window empty", async () => {
    const spent = await leaseRequests(pool, 1, [{ bucket: "t:c", capacity: 2, want: 2 }]);
    expect(spent).toMatchObject([{ granted: 2, leased: 2 }]);
    const next = await waitFor(
      async () => {
        const [g] = await leaseRequests(pool, 1, [{ bucket: "t:c", capacity: 2, want: 1 }]);
        return g.windowStartMs > spent[0].windowStartMs ? g : undefined;
      },
      { timeoutMs: 5000, what: "the bucket's next one-second window" },
    );
    expect(next).toMatchObject({ granted: 1, leased: 1 });
  });

  it("sweeps buckets whose window ended long ago", async () => {
    await leaseRequests(pool, 60, [{ bucket: "old", capacity: 5, want: 1 }]);
    await pool.query("UPDATE rate_limit_buckets SET window_start = window_start - interval '2 hours' WHERE bucket = 'old'");
    expect(await sweepRateLimitBuckets(pool, 3600)).toBe(1);
    const { rows } = await pool.query("SELECT bucket FROM rate_limit_buckets WHERE bucket = 'old'");
    expect(rows).toEqual([]);
  });
});

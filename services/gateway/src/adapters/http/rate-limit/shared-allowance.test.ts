import { createLogger } from "@steward/platform";
import { createSharedAllowance, type LeaseBuckets } from "./shared-allowance";
import type { BucketSpec } from "./rate-limits";

const logger = createLogger("rate-limit-test", "silent");

/** The shared counter as PostgreSQL keeps it (fixed windows on one clock), counting the statements it serves. */
function fakeCounter(clock: { now: number }) {
  const rows = new Map<string, { window: number; leased: number }>();
  const calls: Array<Array<{ bucket: string; want: number }>> = [];
  let down = false;
  const lease: LeaseBuckets = async (windowSeconds, wants) => {
    calls.push(wants.map((w) => ({ bucket: w.bucket, want: w.want })));
    if (down) throw Object.assign(new Error("connection refused"), { code: "ECONNREFUSED" });
    const size = windowSeconds * 1000;
    const window = Math.floor(clock.now / size) * size;
    return wants.map((w) => {
      const row = rows.get(w.bucket);
      const leased = row && row.window === window ? row.leased : 0;
      const granted = Math.max(0, Math.min(w.want, w.capacity - leased));
      rows.set(w.bucket, { window, leased: leased + granted });
      return { bucket: w.bucket, granted, leased: leased + granted, capacity: w.capacity, windowStartMs: window, windowEndsInMs: window + size - clock.now };
    });
  };
  return { lease, calls, setDown: (d: boolean) => void (down = d) };
}

const user = (capacity: number): BucketSpec => ({ bucket: "user:u", capacity, scope: "this user" });
const tenant = (capacity: number): BucketSpec => ({ bucket: "tenant:t", capacity, scope: "this tenant" });

async function admittedOf(take: () => Promise<{ admitted: boolean }>, n: number): Promise<number> {
  let admitted = 0;
  for (let i = 0; i < n; i++) if ((await take()).admitted) admitted += 1;
  return admitted;
}

describe("createSharedAllowance: local allowances over one shared counter", () => {
  it("given two replicas on one counter, then together they admit exactly the window's capacity, then refuse until it ends", async () => {
    const clock = { now: 60_000 * 100 + 15_000 };
    const counter = fakeCounter(clock);
    const options = { windowSeconds: 60, now: () => clock.now };
    const a = createSharedAllowance(counter.lease, logger, options);
    const b = createSharedAllowance(counter.lease, logger, options);
    let admitted = 0;
    for (let i = 0; i < 40; i++) if ((await (i % 3 ? a : b).take([user(25)])).admitted) admitted += 1;
    expect(admitted).toBe(25);

    const refused = await b.take([user(25)]);
    expect(refused).toEqual({ admitted: false, scope: "this user", retryAfterSeconds: 45 });
    // A spent window is known locally: a flood costs no further statement.
    const statements = counter.calls.length;
    expect(await admittedOf(() => a.take([user(25)]), 200)).toBe(0);
    expect(await admittedOf(() => b.take([user(25)]), 200)).toBe(0);
    expect(counter.calls.length).toBe(statements);

    clock.now += 45_000;
    expect(await a.take([user(25)])).toEqual({ admitted: true });
  });

  it("takes from every bucket of a request or from none: a spent tenant leaves the user's allowance whole", async () => {
    const clock = { now: 0 };
    const counter = fakeCounter(clock);
    const allowance = createSharedAllowance(counter.lease, logger, { windowSeconds: 60, now: () => clock.now });
    expect(await admittedOf(() => allowance.take([user(5), tenant(3)]), 3)).toBe(3);
    expect(await allowance.take([user(5), tenant(3)])).toMatchObject({ admitted: false, scope: "this tenant" });
    // The user still has 2 of 5: the refused request took nothing from it.
    expect(await admittedOf(() => allowance.take([user(5)]), 5)).toBe(2);
  });

  it("leases for many requests at once in one statement, and in small leases near the limit", async () => {
    const clock = { now: 0 };
    const counter = fakeCounter(clock);
    const allowance = createSharedAllowance(counter.lease, logger, { windowSeconds: 60, now: () => clock.now });
    const verdicts = await Promise.all(Array.from({ length: 50 }, () => allowance.take([user(10_000), tenant(50_000)])));
    expect(verdicts.every((v) => v.admitted)).toBe(true);
    expect(counter.calls).toHaveLength(1);
    expect(counter.calls[0]).toEqual([
      { bucket: "user:u", want: 100 },
      { bucket: "tenant:t", want: 100 },
    ]);
    // 50 more are served from what is held: no statement.
    expect(await admittedOf(() => allowance.take([user(10_000), tenant(50_000)]), 50)).toBe(50);
    expect(counter.calls).toHaveLength(1);

    const small = fakeCounter(clock);
    const near = createSharedAllowance(small.lease, logger, { windowSeconds: 60, now: () => clock.now });
    expect(await admittedOf(() => near.take([user(16)]), 16)).toBe(16);
    expect(small.calls.every((c) => c[0].want === 1)).toBe(true);
  });

  it("when the shared counter is unreachable, admits a bounded trickle on its own and says so once", async () => {
    const clock = { now: 0 };
    const counter = fakeCounter(clock);
    const warnings: string[] = [];
    const spy = { ...logger, warn: (_o: unknown, msg: string) => void warnings.push(msg) } as typeof logger;
    const allowance = createSharedAllowance(counter.lease, spy, { windowSeconds: 60, now: () => clock.now });
    counter.setDown(true);
    // One lease's worth a second (here 160/16 = 10); then refused until the second ends.
    expect(await admittedOf(() => allowance.take([user(160)]), 50)).toBe(10);
    expect(await allowance.take([user(160)])).toEqual({ admitted: false, scope: "this user", retryAfterSeconds: 1 });
    clock.now += 1000;
    expect(await admittedOf(() => allowance.take([user(160)]), 50)).toBe(10);
    expect(warnings).toEqual(["rate limits: the shared counter is unreachable; each replica admits a bounded share on its own"]);
    counter.setDown(false);
    clock.now += 1000;
    expect(await allowance.take([user(160)])).toEqual({ admitted: true });
  });
});

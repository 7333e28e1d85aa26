import { afterIdle, wallMs } from "./stats";

// The bench compares its own times with PostgreSQL's clock_timestamp(). Both must read the system clock, also
// after the system clock is adjusted while the bench runs.

describe("wallMs", () => {
  afterEach(() => jest.restoreAllMocks());

  it("given an unadjusted clock, then it agrees with Date.now() to within its millisecond", () => {
    expect(Math.abs(wallMs() - Date.now())).toBeLessThanOrEqual(1.5);
  });

  it("given the system clock stepped 600 ms ahead, then it follows the step and keeps sub-millisecond resolution", () => {
    const real = Date.now.bind(Date);
    jest.spyOn(Date, "now").mockImplementation(() => real() + 600);
    const after = wallMs();
    expect(Math.abs(after - Date.now())).toBeLessThanOrEqual(1.5);
    const later = wallMs();
    expect(later).toBeGreaterThanOrEqual(after);
    expect(Number.isInteger(later) && Number.isInteger(after)).toBe(false);
  });
});

describe("afterIdle", () => {
  it("given an exchange, then each sample starts an idle pause after the one before ended and times the exchange alone", async () => {
    const idle = { samples: 4, ms: 15 };
    const starts: number[] = [];
    const ends: number[] = [];
    const samples = await afterIdle(idle, async () => {
      starts.push(performance.now());
      await Promise.resolve();
      ends.push(performance.now());
    });
    expect(samples).toHaveLength(4);
    for (let i = 1; i < starts.length; i++) expect(starts[i] - ends[i - 1]).toBeGreaterThanOrEqual(idle.ms - 1);
    // The pause is not counted: each sample is the exchange's own time, far under the pause before it.
    samples.forEach((sample, i) => {
      expect(Math.abs(sample - (ends[i] - starts[i]))).toBeLessThan(1);
      expect(sample).toBeLessThan(idle.ms - 1);
    });
  });
});

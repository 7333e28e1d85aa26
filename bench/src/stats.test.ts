import { afterIdle, wallMs, type PauseClock } from "./stats";

// The bench compares its own times with PostgreSQL's clock_timestamp(). Both must read the system clock, also
// after the system clock is adjusted while the bench runs. Each reading is bracketed by Date.now() before and
// after, so that a pause of the process between two readings (a collection, a busy host) cannot fail the spec.

describe("wallMs", () => {
  afterEach(() => jest.restoreAllMocks());

  it("given an unadjusted clock, then it lies within Date.now()'s millisecond of the readings around it", () => {
    const before = Date.now();
    const wall = wallMs();
    const after = Date.now();
    expect(wall).toBeGreaterThanOrEqual(before - 1.5);
    expect(wall).toBeLessThanOrEqual(after + 1.5);
  });

  it("given the system clock stepped 600 ms ahead, then it follows the step and keeps sub-millisecond resolution", () => {
    const real = Date.now.bind(Date);
    jest.spyOn(Date, "now").mockImplementation(() => real() + 600);
    const before = Date.now();
    const after = wallMs();
    expect(after).toBeGreaterThanOrEqual(before - 1.5);
    expect(after).toBeLessThanOrEqual(Date.now() + 1.5);
    const later = wallMs();
    expect(later).toBeGreaterThanOrEqual(after);
    expect(Number.isInteger(later) && Number.isInteger(after)).toBe(false);
  });
});

/** A clock that moves only when told: the pause moves it by its length, each exchange by its own length. */
function steppedClock() {
  let at = 0;
  const steps: string[] = [];
  const clock: PauseClock = {
    now: () => at,
    sleep: async (ms) => {
      steps.push(`pause ${ms}`);
      at += ms;
    },
  };
  const exchange = (ms: number) => async () => {
    steps.push(`exchange ${ms}`);
    at += ms;
  };
  return { clock, steps, exchange };
}

describe("afterIdle", () => {
  it("given exchanges of known lengths, then each follows its own pause and each sample is the exchange's length alone", async () => {
    const { clock, steps, exchange } = steppedClock();
    const lengths = [0.25, 2.5, 0.125];
    let next = 0;
    const samples = await afterIdle({ samples: 3, ms: 15 }, () => exchange(lengths[next++])(), clock);
    expect(samples).toEqual(lengths);
    expect(steps).toEqual(["pause 15", "exchange 0.25", "pause 15", "exchange 2.5", "pause 15", "exchange 0.125"]);
  });

  it("given the process's own clock, then the exchanges are timed after a real pause", async () => {
    const ends: number[] = [];
    const starts: number[] = [];
    await afterIdle({ samples: 2, ms: 5 }, async () => {
      starts.push(performance.now());
      ends.push(performance.now());
    });
    expect(starts[1] - ends[0]).toBeGreaterThanOrEqual(4);
  });
});

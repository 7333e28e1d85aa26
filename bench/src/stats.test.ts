import { wallMs } from "./stats";

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

import { addSeconds, formatMicros, parseMicros } from "./time";

describe("microsecond timestamps", () => {
  it("round-trips six fractional digits", () => {
    const iso = "2026-11-30T09:52:24.123456Z";
    expect(formatMicros(parseMicros(iso))).toBe(iso);
  });

  it("adds whole seconds across a minute boundary", () => {
    expect(addSeconds("2026-11-30T09:59:00.000001Z", 180)).toBe("2026-11-30T10:02:00.000001Z");
  });
});

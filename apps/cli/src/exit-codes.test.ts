import { ApiError, NegativeOutcome, UnreachableError, UsageError, exitCodeOf } from "./errors";
import { ExitCode, exitCodeForRunState, exitCodeForStatus } from "./exit-codes";

describe("exit codes", () => {
  it("maps a followed run's final state: only succeeded is 0", () => {
    expect(exitCodeForRunState("succeeded")).toBe(0);
    expect(exitCodeForRunState("failed")).toBe(1);
    expect(exitCodeForRunState("cancelled")).toBe(1);
  });

  it("maps HTTP statuses: 4xx refused (3), 5xx unreachable (4)", () => {
    expect([400, 401, 403, 404, 409, 422, 429].map(exitCodeForStatus)).toEqual(Array(7).fill(3));
    expect([500, 502, 503].map(exitCodeForStatus)).toEqual([4, 4, 4]);
  });

  it("maps each error kind, and anything unexpected to the internal code", () => {
    expect(exitCodeOf(new UsageError("x"))).toBe(ExitCode.usage);
    expect(exitCodeOf(new ApiError({ status: 401, title: "Unauthorized", code: 10011 }))).toBe(3);
    expect(exitCodeOf(new ApiError({ status: 503, title: "Service Unavailable", code: 10503 }))).toBe(4);
    expect(exitCodeOf(new UnreachableError("down"))).toBe(4);
    expect(exitCodeOf(new NegativeOutcome("invalid"))).toBe(1);
    expect(exitCodeOf(Object.assign(new TypeError("bad"), { code: "ERR_PARSE_ARGS_UNKNOWN_OPTION" }))).toBe(2);
    expect(exitCodeOf(new Error("bug"))).toBe(70);
  });

  it("says a problem's status, code, title and detail", () => {
    expect(new ApiError({ status: 409, title: "Conflict", detail: "the run is not awaiting input", code: 10090 }).message).toBe(
      "409 / 10090 Conflict: the run is not awaiting input",
    );
    expect(new ApiError({ status: 404, title: "Not Found", detail: "Not Found", code: 10050 }).message).toBe("404 / 10050 Not Found");
  });
});

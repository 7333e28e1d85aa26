import { toolSignal } from "./tool-signal";

describe("a tool run's signal: its timeout, or the caller's cancel", () => {
  afterEach(() => jest.useRealTimers());

  it("aborts with reason timeout when the tool's time runs out", () => {
    jest.useFakeTimers();
    const caller = new AbortController();
    const stop = toolSignal(1000, caller.signal);
    jest.advanceTimersByTime(999);
    expect(stop.signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    expect([stop.signal.aborted, stop.signal.reason]).toEqual([true, "timeout"]);
    stop.release();
  });

  it("aborts with reason cancelled as soon as the caller gives up, or at once when it already had", () => {
    const caller = new AbortController();
    const stop = toolSignal(60_000, caller.signal);
    caller.abort();
    expect([stop.signal.aborted, stop.signal.reason]).toEqual([true, "cancelled"]);
    stop.release();
    const late = toolSignal(60_000, caller.signal);
    expect([late.signal.aborted, late.signal.reason]).toEqual([true, "cancelled"]);
    late.release();
  });

  it("after release, neither the timer nor the caller reaches the finished run's signal", () => {
    jest.useFakeTimers();
    const caller = new AbortController();
    const added = jest.spyOn(caller.signal, "addEventListener");
    const removed = jest.spyOn(caller.signal, "removeEventListener");
    const stop = toolSignal(1000, caller.signal);
    stop.release();
    expect(removed).toHaveBeenCalledWith("abort", added.mock.calls[0][1]);
    caller.abort();
    jest.advanceTimersByTime(5000);
    expect(stop.signal.aborted).toBe(false);
    expect(jest.getTimerCount()).toBe(0);
  });
});

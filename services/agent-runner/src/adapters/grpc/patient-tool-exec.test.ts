import { status } from "@grpc/grpc-js";
import type { InvokeRequest, InvokeResponse, ToolExecApi } from "@steward/proto";
import { withPatience } from "./patient-tool-exec";

const answer = (permit: boolean, code = ""): InvokeResponse =>
  ({
    fingerprint: "f",
    decision: { permit, code, reasons: [], policyIds: [] },
    resultCode: permit ? "ok" : code,
    resultJson: "{}",
    replayed: false,
    nextState: "",
    decisionMs: 0,
    toolMs: 0,
  }) as InvokeResponse;
const grpcError = (code: number, details: string) => Object.assign(new Error(details), { code, details });

/** A tool-exec that answers from a script, one entry per call, and counts the calls. */
function scripted(script: Array<InvokeResponse | Error>) {
  let calls = 0;
  const api: ToolExecApi = {
    listTools: async () => ({ tools: [] }),
    invoke: async () => {
      const next = script[Math.min(calls++, script.length - 1)];
      if (next instanceof Error) throw next;
      return next;
    },
    state: () => "ready",
    close: () => undefined,
  };
  return { api, calls: () => calls };
}

const req = {} as InvokeRequest;
const fast = { waitMs: 5000, initialDelayMs: 1 };

describe("a patient tool-exec client", () => {
  it("asks again while the PDP is unreachable (60502: nothing ran), and returns the permit once it answers", async () => {
    const t = scripted([answer(false, "60502"), answer(false, "60502"), answer(true)]);
    const res = await withPatience(t.api, fast).invoke(req, { deadlineMs: 10_000 });
    expect([res.decision?.permit, t.calls()]).toEqual([true, 3]);
  });

  it("lets the fail-closed deny stand once its patience is spent", async () => {
    // On jest's clock (Date.now and the pauses), so that a pause of the host cannot spend the 50 ms patience.
    jest.useFakeTimers();
    try {
      const t = scripted([answer(false, "60502")]);
      const started = Date.now();
      const answered = withPatience(t.api, { waitMs: 50, initialDelayMs: 5 }).invoke(req, { deadlineMs: 10_000 });
      await jest.runAllTimersAsync();
      const res = await answered;
      expect(res.decision?.code).toBe("60502");
      // Asked at 0, 5, 15 and 35 ms (pauses of 5, 10, 20 ms); the next pause (40 ms) would end past the patience.
      expect([t.calls(), Date.now() - started]).toEqual([4, 35]);
    } finally {
      jest.useRealTimers();
    }
  });

  it("retries tool-exec's own 'nothing kept' answers and an open breaker", async () => {
    const open = Object.assign(new Error("Breaker is open"), { code: "EOPENBREAKER" });
    const t = scripted([
      grpcError(status.UNAVAILABLE, "tool-exec is starting"),
      open,
      grpcError(status.UNAVAILABLE, "tool-exec cannot reach its database"),
      answer(true),
    ]);
    const res = await withPatience(t.api, fast).invoke(req, { deadlineMs: 10_000 });
    expect([res.decision?.permit, t.calls()]).toEqual([true, 4]);
  });

  it("retries while the channel has no connection to send on (tool-exec restarting: refused, its name gone, a stuck channel replaced)", async () => {
    const t = scripted([
      grpcError(status.UNAVAILABLE, "No connection established. Last error: connect ECONNREFUSED 10.89.0.5:50051"),
      grpcError(status.UNAVAILABLE, "Name resolution failed for target dns:tool-exec:50051"),
      grpcError(status.UNAVAILABLE, "Channel closed before call started"),
      answer(true),
    ]);
    const res = await withPatience(t.api, fast).invoke(req, { deadlineMs: 10_000 });
    expect([res.decision?.permit, t.calls()]).toEqual([true, 4]);
  });

  it("never repeats a call that may have run: a dropped connection, a real deny, a tool's answer", async () => {
    const dropped = scripted([grpcError(status.UNAVAILABLE, "Connection dropped"), answer(true)]);
    await expect(withPatience(dropped.api, fast).invoke(req, { deadlineMs: 10_000 })).rejects.toThrow("Connection dropped");
    expect(dropped.calls()).toBe(1);
    const denied = scripted([answer(false, "60500"), answer(true)]);
    expect((await withPatience(denied.api, fast).invoke(req, { deadlineMs: 10_000 })).decision?.code).toBe("60500");
    expect(denied.calls()).toBe(1);
  });

  it("stays within the call's deadline", async () => {
    const t = scripted([answer(false, "60502")]);
    const res = await withPatience(t.api, { waitMs: 60_000, initialDelayMs: 100 }).invoke(req, { deadlineMs: 1050 });
    expect(res.decision?.code).toBe("60502");
    expect(t.calls()).toBe(1);
  });
});

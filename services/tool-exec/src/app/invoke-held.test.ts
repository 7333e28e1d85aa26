import { createLogger } from "@steward/platform";
import type { PolicyDecisionApi } from "@steward/proto";
import { createToolRegistry } from "../domain/registry";
import type { HeldRecord, IdempotencyStore } from "./idempotency-store";
import { waitFor } from "../../../../test/support/wait-for";
import { specTool } from "./fixtures/spec-tool";
import { CallerGoneError, createInvokeHandler, type InvokeCommand } from "./invoke-tool";

// A call sent held (docs/architecture.md, "A tool call sent with its commit"): the app layer alone, with a
// PDP, a record store and a tool that write down what happened to them, in order. The fakes answer without
// timers, so one turn of the event loop (`settle`) lets everything that can happen happen; only a record's
// grace is a timer.

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function harness(safety: "read" | "write", options: { heldGraceMs?: number; spare?: boolean } = {}) {
  const log: string[] = [];
  const pdp: PolicyDecisionApi = {
    decide: async () => {
      log.push("PDP asked");
      return { permit: true, code: "", reasons: [], policyIds: ["p"] } as never;
    },
    state: () => "READY" as never,
    close: () => undefined,
  };
  const results: IdempotencyStore = {
    spare: () => options.spare ?? true,
    find: async () => {
      log.push("record looked up");
      return null;
    },
    keep: async () => void log.push("result kept"),
    async hold(): Promise<HeldRecord> {
      log.push("record held");
      return {
        stored: null,
        complete: async (work) => {
          const value = await work({} as never);
          log.push("result kept");
          return value;
        },
        release: async () => void log.push("record let go"),
      };
    },
  };
  const tool = specTool("counter", safety, async () => {
    log.push("tool ran");
    return { result: { n: 1 } };
  });
  const invoke = createInvokeHandler({
    registry: createToolRegistry([tool]),
    pdp,
    results,
    logger: createLogger("tool-exec", "silent"),
    heldGraceMs: options.heldGraceMs,
  });
  let go!: () => void;
  let drop!: (err: Error) => void;
  const released = new Promise<void>((resolve, reject) => {
    go = resolve;
    drop = reject;
  });
  const cmd: InvokeCommand = {
    runId: "00000000-0000-4000-8000-000000000001",
    tenantId: "acme",
    userId: "alice",
    stepNo: 1,
    callId: "c1",
    toolName: "counter",
    argumentsJson: "{}",
    elevationSessionId: "",
    released,
  };
  return { log, go, drop, call: () => invoke(cmd) };
}

describe("a call sent held", () => {
  it.each(["write", "read"] as const)(
    "given a held call to a %s tool, then its record is opened and the PDP asked at once; the tool runs only once the call is released",
    async (safety) => {
      const h = harness(safety);
      const opened = safety === "write" ? "record held" : "record looked up";
      const call = h.call();
      await settle();
      expect(h.log).toEqual([opened, "PDP asked"]);
      h.go();
      const outcome = await call;
      expect(outcome).toMatchObject({ resultCode: "ok", replayed: false, decision: { permit: true } });
      expect(h.log).toEqual([opened, "PDP asked", "tool ran", "result kept"]);
    },
  );

  it("given a held call, when its caller drops it, then it ends as a call whose caller is gone: its record let go, nothing run", async () => {
    const h = harness("write");
    const call = h.call();
    await settle();
    h.drop(new Error("dropped"));
    await expect(call).rejects.toBeInstanceOf(CallerGoneError);
    await waitFor(() => (h.log.includes("record let go") ? true : undefined), { what: "the record let go" });
    expect(h.log).toEqual(["record held", "PDP asked", "record let go"]);
  });

  it("given a held call and no connection free for its record, then only the PDP is asked until the release; then the record is opened", async () => {
    const h = harness("write", { spare: false });
    const call = h.call();
    await settle();
    expect(h.log).toEqual(["PDP asked"]);
    h.go();
    await expect(call).resolves.toMatchObject({ resultCode: "ok", replayed: false });
    expect(h.log).toEqual(["PDP asked", "record held", "tool ran", "result kept"]);
  });

  it("given a held call whose release is slower than the grace, then its record is let go meanwhile and opened again once released", async () => {
    const h = harness("write", { heldGraceMs: 1 });
    const call = h.call();
    await waitFor(() => (h.log.includes("record let go") ? true : undefined), { what: "the record let go after the grace" });
    expect(h.log).toEqual(["record held", "PDP asked", "record let go"]);
    h.go();
    await expect(call).resolves.toMatchObject({ resultCode: "ok", replayed: false });
    expect(h.log).toEqual(["record held", "PDP asked", "record let go", "record held", "tool ran", "result kept"]);
  });
});

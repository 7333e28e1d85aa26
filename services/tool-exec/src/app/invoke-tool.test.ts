import { setTimeout as sleep } from "node:timers/promises";
import { Type } from "@sinclair/typebox";
import { createLogger } from "@steward/platform";
import type { PolicyDecisionApi } from "@steward/proto";
import { createToolRegistry } from "../domain/registry";
import type { AnyToolDefinition } from "../domain/tool";
import type { HeldRecord, IdempotencyStore, StoredToolResult } from "../adapters/pg/idempotency-store";
import { CallerGoneError, createInvokeHandler, type InvokeCommand } from "./invoke-tool";

// The app layer alone: a permitting PDP and a record store in memory, whose lock is granted when the test says.
// (The store's PostgreSQL behaviour is specified in adapters/pg/idempotency-store.test.ts.)
describe("invoking a write whose caller has gone", () => {
  const permit: PolicyDecisionApi = {
    decide: async () => ({ permit: true, code: "", reasons: [], policyIds: ["p"] }) as never,
    state: () => "READY" as never,
    close: () => undefined,
  };

  function harness() {
    const effects: string[] = [];
    const outcomes: string[] = [];
    let grant: () => void = () => undefined;
    const granted = new Promise<void>((resolve) => (grant = resolve));
    let markStarted: () => void = () => undefined;
    const started = new Promise<void>((resolve) => (markStarted = resolve));
    const results: IdempotencyStore = {
      find: async () => null,
      keep: async () => undefined,
      async hold(): Promise<HeldRecord> {
        await granted;
        return {
          stored: null,
          async complete(work) {
            try {
              const value: StoredToolResult = await work({} as never);
              outcomes.push(value.resultCode === "ok" ? "kept" : "rolled back");
              return value;
            } catch (err) {
              outcomes.push("rolled back");
              throw err;
            }
          },
          release: async () => void outcomes.push("released"),
        };
      },
    };
    const tool: AnyToolDefinition = {
      name: "slow_write",
      description: "a write that takes a while",
      input: Type.Object({}, { additionalProperties: false }),
      normalise: (i: object) => i,
      safety: "write",
      policyPoint: "knowledge.document.write",
      idempotent: true,
      abortOnDeny: false,
      requireConfirmation: false,
      exploration: false,
      async run(ctx) {
        effects.push("started");
        markStarted();
        await sleep(60_000, undefined, { signal: ctx.signal });
        effects.push("finished");
        return { result: {} };
      },
    };
    const invoke = createInvokeHandler({ registry: createToolRegistry([tool]), pdp: permit, results, logger: createLogger("tool-exec", "silent") });
    const caller = new AbortController();
    const cmd: InvokeCommand = {
      runId: "00000000-0000-4000-8000-000000000001",
      tenantId: "acme",
      userId: "alice",
      stepNo: 1,
      callId: "c1",
      toolName: "slow_write",
      argumentsJson: "{}",
      elevationSessionId: "",
      signal: caller.signal,
    };
    return { effects, outcomes, grant, started, caller, call: () => invoke(cmd) };
  }

  it("does not run at all when the caller left while it waited for the record's lock", async () => {
    const h = harness();
    const call = h.call();
    h.caller.abort();
    h.grant();
    await expect(call).rejects.toBeInstanceOf(CallerGoneError);
    expect(h.effects).toEqual([]);
    expect(h.outcomes).toEqual(["rolled back"]);
  });

  it("stops, keeps nothing and says so when the caller leaves while it runs", async () => {
    const h = harness();
    h.grant();
    const call = h.call();
    await h.started;
    expect(h.effects).toEqual(["started"]);
    h.caller.abort();
    await expect(call).rejects.toBeInstanceOf(CallerGoneError);
    expect(h.effects).toEqual(["started"]);
    expect(h.outcomes).toEqual(["rolled back"]);
  });
});

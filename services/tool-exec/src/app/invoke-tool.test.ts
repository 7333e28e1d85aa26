import { once } from "node:events";
import { createLogger } from "@steward/platform";
import type { PolicyDecisionApi } from "@steward/proto";
import { createToolRegistry } from "../domain/registry";
import type { HeldRecord, IdempotencyStore, StoredToolResult } from "./idempotency-store";
import { specTool } from "./fixtures/spec-tool";
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
      spare: () => true,
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
    const tool = specTool("slow_write", "write", async (ctx) => {
      effects.push("started");
      markStarted();
      // It never finishes on its own: it runs until its call is cancelled, and fails then.
      await once(ctx.signal, "abort");
      throw ctx.signal.reason;
    });
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

// Where a call's time went, as tool-exec reports it: `performance.now()` is a clock the fakes move on by the
// time they take, so the numbers are exact and nothing waits.
describe("timing a call: the PDP's decision and the tool apart", () => {
  let clock = 0;
  beforeEach(() => {
    clock = 1_000;
    jest.spyOn(performance, "now").mockImplementation(() => clock);
  });
  afterEach(() => jest.restoreAllMocks());

  function harness(opts: { pdpMs: number; toolMs: number; permit?: boolean; stored?: StoredToolResult }) {
    const ran: string[] = [];
    const pdp: PolicyDecisionApi = {
      decide: async () => {
        clock += opts.pdpMs;
        return { permit: opts.permit ?? true, code: opts.permit === false ? "60500" : "", reasons: [], policyIds: ["p"] } as never;
      },
      state: () => "READY" as never,
      close: () => undefined,
    };
    const results: IdempotencyStore = {
      spare: () => true,
      find: async () => opts.stored ?? null,
      keep: async () => undefined,
      hold: async () => ({ stored: opts.stored ?? null, complete: (work) => work({} as never), release: async () => undefined }),
    };
    const tool = (name: string, safety: "read" | "write", idempotent: boolean) =>
      specTool(
        name,
        safety,
        async () => {
          ran.push(name);
          clock += opts.toolMs;
          return { result: { from: name } };
        },
        { idempotent },
      );
    const registry = createToolRegistry([tool("search", "read", true), tool("save", "write", true), tool("send", "write", false)]);
    const invoke = createInvokeHandler({ registry, pdp, results, logger: createLogger("tool-exec", "silent") });
    const call = (toolName: string) =>
      invoke({
        runId: "00000000-0000-4000-8000-000000000002",
        tenantId: "acme",
        userId: "alice",
        stepNo: 1,
        callId: "c1",
        toolName,
        argumentsJson: "{}",
        elevationSessionId: "",
      });
    return { ran, call };
  }

  it("shows a slow PDP in decisionMs and a slow tool in toolMs, whichever way the tool keeps its record", async () => {
    for (const toolName of ["search", "save", "send"]) {
      const slowPdp = await harness({ pdpMs: 1_800, toolMs: 4 }).call(toolName);
      expect([toolName, slowPdp.decisionMs, slowPdp.toolMs, slowPdp.replayed]).toEqual([toolName, 1_800, 4, false]);
      const slowTool = await harness({ pdpMs: 3, toolMs: 2_500 }).call(toolName);
      expect([toolName, slowTool.decisionMs, slowTool.toolMs, slowTool.replayed]).toEqual([toolName, 3, 2_500, false]);
    }
  });

  it("reports toolMs 0 for a result replayed from its record, and for a denied call: the tool never ran", async () => {
    const stored: StoredToolResult = { resultCode: "ok", result: { result: { from: "the record" }, evidence: [] } };
    for (const toolName of ["search", "save"]) {
      const h = harness({ pdpMs: 12, toolMs: 700, stored });
      const replayed = await h.call(toolName);
      expect([toolName, replayed.replayed, replayed.decisionMs, replayed.toolMs, replayed.result.result]).toEqual([
        toolName,
        true,
        12,
        0,
        { from: "the record" },
      ]);
      expect(h.ran).toEqual([]);
    }
    const h = harness({ pdpMs: 9, toolMs: 700, permit: false });
    const denied = await h.call("send");
    expect([denied.resultCode, denied.decisionMs, denied.toolMs]).toEqual(["60500", 9, 0]);
    expect(h.ran).toEqual([]);
  });
});

// The MCP session a run was started from is named in the PDP's request, so the decision log and the policies
// see it; a call outside MCP names none (Cedar reads an absent attribute as "no session", never as empty).
describe("the PDP request of a call made for an MCP session", () => {
  function harness() {
    const asked: Array<Record<string, string>> = [];
    const pdp: PolicyDecisionApi = {
      decide: async (request) => {
        asked.push({ ...request.context });
        return { permit: true, code: "", reasons: [], policyIds: ["p"] } as never;
      },
      state: () => "READY" as never,
      close: () => undefined,
    };
    const results: IdempotencyStore = {
      spare: () => true,
      find: async () => null,
      keep: async () => undefined,
      hold: async () => ({ stored: null, complete: (work) => work({} as never), release: async () => undefined }),
    };
    const search = specTool("search", "read", async () => ({ result: {} }));
    const invoke = createInvokeHandler({ registry: createToolRegistry([search]), pdp, results, logger: createLogger("tool-exec", "silent") });
    const cmd: InvokeCommand = {
      runId: "00000000-0000-4000-8000-000000000003",
      tenantId: "acme",
      userId: "alice",
      stepNo: 0,
      callId: "invoke-1",
      toolName: "search",
      argumentsJson: "{}",
      elevationSessionId: "",
    };
    return { asked, call: (over: Partial<InvokeCommand>) => invoke({ ...cmd, ...over }) };
  }

  it("names the session and its mode in the context when given", async () => {
    const h = harness();
    await h.call({ mcpSessionId: "7d4b0c2e-0000-4000-8000-00000000000a", mcpMode: "observe" });
    expect(h.asked).toHaveLength(1);
    expect(h.asked[0]).toMatchObject({
      mcp_session: "7d4b0c2e-0000-4000-8000-00000000000a",
      mcp_mode: "observe",
      run_id: "00000000-0000-4000-8000-000000000003",
    });
  });

  it("names neither when the call was not made for a session (absent or empty, as the runner sends it)", async () => {
    const h = harness();
    await h.call({});
    await h.call({ mcpSessionId: "", mcpMode: "" });
    expect(h.asked).toHaveLength(2);
    for (const context of h.asked) {
      expect(context).not.toHaveProperty("mcp_session");
      expect(context).not.toHaveProperty("mcp_mode");
    }
  });
});

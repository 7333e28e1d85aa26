import { requireRunOwner, RunNotOwnedError, type RunOwners } from "./run-owner";
import type { InvokeCommand, InvokeOutcome } from "./invoke-tool";

/** The ownership check before every call: asked of the store once per run, refusals never remembered. */
describe("requireRunOwner", () => {
  const outcome = { resultCode: "ok" } as InvokeOutcome;
  const call = (runId: string, tenantId = "acme", userId = "ana"): InvokeCommand =>
    ({ runId, tenantId, userId, stepNo: 1, callId: "c", toolName: "t", argumentsJson: "{}", elevationSessionId: "" }) as InvokeCommand;

  function setup(owned: Record<string, [string, string]>, remembered?: number) {
    const asked: string[] = [];
    const runs: RunOwners = {
      owns: async (runId, tenantId, userId) => {
        asked.push(runId);
        const owner = owned[runId];
        return owner !== undefined && owner[0] === tenantId && owner[1] === userId;
      },
    };
    const invoked: string[] = [];
    const invoke = requireRunOwner(async (cmd) => (invoked.push(cmd.runId), outcome), runs, remembered);
    return { asked, invoked, invoke };
  }

  it("asks the store at a run's first call only, and runs every call of the owner", async () => {
    const { asked, invoked, invoke } = setup({ r1: ["acme", "ana"] });
    await invoke(call("r1"));
    await invoke(call("r1"));
    await invoke(call("r1"));
    expect(asked).toEqual(["r1"]);
    expect(invoked).toEqual(["r1", "r1", "r1"]);
  });

  it("refuses another tenant or user naming a confirmed run, asking the store again, and never runs it", async () => {
    const { asked, invoked, invoke } = setup({ r1: ["acme", "ana"] });
    await invoke(call("r1"));
    await expect(invoke(call("r1", "globex", "ana"))).rejects.toBeInstanceOf(RunNotOwnedError);
    await expect(invoke(call("r1", "acme", "bob"))).rejects.toBeInstanceOf(RunNotOwnedError);
    expect(asked).toEqual(["r1", "r1", "r1"]);
    expect(invoked).toEqual(["r1"]);
  });

  it("never remembers a refusal: a run unknown at first is asked about again", async () => {
    const owned: Record<string, [string, string]> = {};
    const { asked, invoke } = setup(owned);
    await expect(invoke(call("r2"))).rejects.toBeInstanceOf(RunNotOwnedError);
    owned.r2 = ["acme", "ana"];
    await invoke(call("r2"));
    await invoke(call("r2"));
    expect(asked).toEqual(["r2", "r2"]);
  });

  it("remembers a bounded number of runs, forgetting the longest unconfirmed first", async () => {
    const { asked, invoke } = setup({ a: ["acme", "ana"], b: ["acme", "ana"], c: ["acme", "ana"] }, 2);
    await invoke(call("a"));
    await invoke(call("b"));
    await invoke(call("c")); // a is forgotten
    await invoke(call("b"));
    await invoke(call("c"));
    await invoke(call("a"));
    expect(asked).toEqual(["a", "b", "c", "a"]);
  });
});

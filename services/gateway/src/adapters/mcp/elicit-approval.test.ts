import { createLogger } from "@steward/platform";
import type { RunOutcome } from "../../app/run-outcome";
import { approveByElicitation } from "./elicit-approval";
import type { McpCall, McpToolDeps } from "./tool";

const waiting = (args: string): RunOutcome => ({
  run_id: "r1",
  state: "awaiting_confirmation",
  answer: null,
  evidence: [],
  error: null,
  settled: true,
  waiting_for: { kind: "confirmation", tool_name: "save_note", arguments: args, fingerprint: "f".repeat(64) },
});

function fixture(mode: "observe" | "execute", channelAdmitted = true) {
  const asked: string[] = [];
  const confirmed: string[] = [];
  const decided: unknown[] = [];
  const call = {
    principal: { tenantId: "acme", userId: "mo", roles: ["member"] },
    session: { id: "s1", mode },
    signal: new AbortController().signal,
    progress: () => undefined,
    elicit: async (params: { message: string }) => {
      asked.push(params.message);
      return { action: "accept" as const, content: { decision: "approve" } };
    },
  } as unknown as McpCall<unknown>;
  const deps = {
    logger: createLogger("test", "silent"),
    decide: async (...args: unknown[]) => {
      decided.push(args);
      return channelAdmitted ? { permit: true, code: "" } : { permit: false, code: "10003" };
    },
    controls: {
      confirm: async (_p: unknown, runId: string, decision: string, _t: string, channel: string) => void confirmed.push(`${runId} ${decision} ${channel}`),
    },
    follow: async () => ({ ...waiting("{}"), state: "succeeded", waiting_for: null }),
  } as unknown as McpToolDeps;
  return { call, deps, asked, confirmed, decided };
}

describe("approval through the client's elicitation", () => {
  it("asks the PDP for the elicitation channel first, then the person; confirms their answer with its channel", async () => {
    const { call, deps, asked, confirmed, decided } = fixture("execute");
    const outcome = await approveByElicitation(call, deps, waiting('{"title":"t"}'), Date.now() + 1000);
    expect(decided).toEqual([
      [call.principal, "agent.run.control", { type: "run", id: "r1" }, call.session, { runId: "r1", approvalChannel: "mcp_elicitation" }],
    ]);
    expect(asked).toEqual([expect.stringContaining('save_note with {"title":"t"}')]);
    expect(confirmed).toEqual(["r1 approve mcp_elicitation"]);
    expect(outcome.state).toBe("succeeded");
  });

  it("asks nobody when the tenant's policy does not admit the channel: the run goes on waiting for a person", async () => {
    const { call, deps, asked, confirmed, decided } = fixture("execute", false);
    const outcome = await approveByElicitation(call, deps, waiting("{}"), Date.now() + 1000);
    expect(decided).toHaveLength(1);
    expect([...asked, ...confirmed]).toEqual([]);
    expect(outcome).toMatchObject({ state: "awaiting_confirmation", waiting_for: { kind: "confirmation" } });
  });

  it("asks nothing for arguments too long to show whole, nor in an Observe session: the run goes on waiting", async () => {
    const long = fixture("execute");
    const tooLong = JSON.stringify({ body: "x".repeat(4000) });
    expect(await approveByElicitation(long.call, long.deps, waiting(tooLong), Date.now() + 1000)).toMatchObject({ state: "awaiting_confirmation" });
    expect(long.asked).toEqual([]);
    const observe = fixture("observe");
    await approveByElicitation(observe.call, observe.deps, waiting("{}"), Date.now() + 1000);
    expect([...long.confirmed, ...observe.asked, ...observe.confirmed]).toEqual([]);
  });
});

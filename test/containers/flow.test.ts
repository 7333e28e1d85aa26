import { checkRunInvariants } from "../support/faults/invariants";
import { openEventStream } from "../support/sse";
import { waitFor } from "../support/wait-for";
import { progress, startedBy, submitRuns } from "./support/load";
import { startTopology, type Topology } from "./support/topology";

// The whole platform as containers (PostgreSQL, a three-node NATS JetStream cluster with streams replicated
// three times, policy, tool-exec, two agent-runners, the gateway), driven through its public REST API.

jest.setTimeout(300_000);

describe("Steward as containers: the whole flow", () => {
  let t: Topology;

  beforeAll(async () => {
    t = await startTopology({ runners: 2 });
  });

  afterAll(async () => {
    await t?.teardown();
  });

  it("answers from the knowledge base: POST → queued → succeeded with evidence; a stream resumed with Last-Event-ID gets the rest once", async () => {
    const created = await t.http("POST", "/v1/agents/runs", { input: "How long do I have to ask for a refund?" }, "demo");
    expect(created.status).toBe(201);
    expect(created.body.state).toBe("queued");
    const id = created.body.id as string;
    const token = await t.token("demo");
    const url = `${t.gatewayUrl}/v1/agents/runs/${id}/events`;

    const first = await openEventStream(url, token);
    await first.until((m) => m.some((e) => e.event === "tool_call"), 60_000);
    // Resumed from the tool call (the run may well have finished meanwhile: the rest must still come, once).
    const k = Number(first.messages.find((m) => m.event === "tool_call")!.id);
    first.close();
    const resumed = await openEventStream(url, token, String(k));
    await resumed.ended;

    const run = (await t.http("GET", `/v1/agents/runs/${id}`, undefined, "demo")).body;
    expect(run.state).toBe("succeeded");
    expect(run.output.evidence.map((e: { title: string }) => e.title)).toContain("Refund policy");
    expect(run.output.text).toBe(`From ${run.output.evidence[0].title}.`);
    const stored = (await t.http("GET", `/v1/agents/runs/${id}/events?limit=1000`, undefined, "demo")).body.items as Array<{ seq: number; type: string }>;
    const seqs = resumed.messages.filter((m) => m.id).map((m) => Number(m.id));
    expect(seqs).toEqual(stored.filter((e) => e.seq > k).map((e) => e.seq));
    expect(resumed.messages.at(-1)?.event).toBe("run.succeeded");
  });

  it("drives 30 multi-step runs over both runners: each ends once, events gap-free in PostgreSQL and on the replicated stream, each side effect once", async () => {
    const ids = await submitRuns(t, "flow", 30, 200);
    await waitFor(async () => ((await progress(t, ids)).terminal === ids.length ? true : undefined), {
      timeoutMs: 180_000,
      intervalMs: 250,
      what: "all 30 runs to end",
    });
    const nc = await t.connectNats();
    try {
      const checked = await checkRunInvariants({ pool: t.pool, nc, namespace: t.namespace, runIds: ids, toolSteps: t.toolSteps, delayMs: 200 });
      expect(checked.violations).toEqual([]);
      expect(checked.states).toEqual({ succeeded: 30 });
    } finally {
      await nc.close();
    }
    const shares = await startedBy(t, ids);
    expect(Object.values(shares).reduce((a, b) => a + b, 0)).toBe(30);
    expect(Object.keys(shares).every((r) => t.runnerNames.includes(r as never))).toBe(true);
    console.info(`runs started per runner: ${JSON.stringify(shares)}`);
  });
});

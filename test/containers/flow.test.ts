import { status as grpcStatus } from "@grpc/grpc-js";
import { checkRunInvariants } from "../support/faults/invariants";
import { openEventStream } from "../support/sse";
import { waitFor } from "../support/wait-for";
import { progress, startedBy, submitRuns } from "./support/load";
import { noteEffects } from "./support/note-effects";
import { grpcAs, listToolsAs, natsLogin, sqlAs, subscription } from "./support/production-probes";
import { startTopology, type Topology } from "./support/topology";

// The whole platform as containers (PostgreSQL, a three-node NATS JetStream cluster with streams replicated
// three times, policy, tool-exec, two agent-runners, the gateway), driven through its public REST API, on the
// production configuration compose.yaml runs; and that configuration shown in force from outside.

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

  it("drives 30 runs of three approved notes over both runners: each ends once, events gap-free in PostgreSQL and on the replicated stream, each note saved once", async () => {
    const ids = await submitRuns(t, "flow", 30, 200);
    await waitFor(async () => ((await progress(t, ids)).terminal === ids.length ? true : undefined), {
      timeoutMs: 180_000,
      intervalMs: 250,
      what: "all 30 runs to end",
    });
    const nc = await t.connectNats();
    try {
      const checked = await checkRunInvariants({
        pool: t.pool,
        nc,
        namespace: t.namespace,
        runIds: ids,
        toolSteps: t.toolSteps,
        delayMs: 200,
        effects: noteEffects,
      });
      expect(checked.violations).toEqual([]);
      expect(checked.states).toEqual({ succeeded: 30 });
    } finally {
      await nc.close();
    }
    // Every note went through the person's approval: three per run, approved through the REST API.
    expect(t.approver.approved()).toBeGreaterThanOrEqual(ids.length * t.toolSteps);
    const shares = await startedBy(t, ids);
    expect(Object.values(shares).reduce((a, b) => a + b, 0)).toBe(30);
    expect(Object.keys(shares).every((r) => t.runnerNames.includes(r as never))).toBe(true);
    console.info(`runs started per runner: ${JSON.stringify(shares)}`);
  });

  describe("runs on the production configuration", () => {
    it("has no development sign-in: POST /v1/dev/sign-in answers 404", async () => {
      const res = await fetch(`${t.gatewayUrl}/v1/dev/sign-in`, { method: "POST" });
      await res.arrayBuffer();
      expect(res.status).toBe(404);
    });

    it("gRPC: tool-exec answers only a certificate of Steward's CA that names a service it serves; no test tool is served", async () => {
      expect(await listToolsAs(t, grpcAs(t, null, "tool-exec"))).toBe(grpcStatus.UNAVAILABLE);
      expect(await listToolsAs(t, grpcAs(t, "policy", "tool-exec"))).toBe(grpcStatus.PERMISSION_DENIED);
      const tools = await listToolsAs(t, grpcAs(t, "agent-runner", "tool-exec"));
      expect(tools).toEqual(expect.arrayContaining(["save_note", "knowledge_search"]));
      expect((tools as string[]).filter((name) => name.startsWith("test_"))).toEqual([]);
    });

    it("NATS: no login without a service's user and password; a service's user only where its permissions allow", async () => {
      expect(await natsLogin(t, null)).toMatch(/Authorization Violation/);
      expect(await natsLogin(t, "gateway", t.planes.credentials.nats.policy)).toMatch(/Authorization Violation/);
      const runner = await t.connectNatsAs("agent-runner", t.planes.credentials.nats["agent-runner"]);
      try {
        expect(await subscription(runner, "agent.deltas.>")).toBe('Permissions Violation for Subscription to "agent.deltas.>"');
        expect(await subscription(runner, "agent.events.*.run.cancel_requested")).toBe("allowed");
      } finally {
        await runner.close();
      }
    });

    it("PostgreSQL: every service is connected as its own role, and a role cannot do what its service may not", async () => {
      // A pool closes its idle connections: a run that searches the knowledge base has every service connect while
      // the connections are watched, each (service, role) seen once kept.
      const seen = new Map<string, Set<string>>();
      const created = await t.http("POST", "/v1/agents/runs", { input: "How long do I have to ask for a refund?" }, "demo");
      expect(created.status).toBe(201);
      await waitFor(
        async () => {
          const { rows } = await t.pool.query<{ app: string; role: string }>(
            "SELECT DISTINCT application_name AS app, usename AS role FROM pg_stat_activity WHERE application_name LIKE 'steward-%'",
          );
          for (const r of rows) seen.set(r.app, (seen.get(r.app) ?? new Set()).add(r.role));
          return ["gateway", "agent-runner", "tool-exec", "policy"].every((s) => seen.has(`steward-${s}`)) ? true : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 100, what: "every service to be seen connected" },
      );
      const rows = [...seen].flatMap(([app, roles]) => [...roles].map((role) => ({ app, role })));
      const roleOf = new Map(rows.map((r) => [r.app, r.role]));
      expect([...seen.values()].every((roles) => roles.size === 1)).toBe(true);
      expect(Object.fromEntries(["gateway", "agent-runner", "tool-exec", "policy"].map((s) => [s, roleOf.get(`steward-${s}`)]))).toEqual({
        gateway: "steward_gateway",
        "agent-runner": "steward_agent_runner",
        "tool-exec": "steward_tool_exec",
        policy: "steward_policy",
      });
      expect(rows.filter((r) => r.role === "steward")).toEqual([]);
      const writePolicySet =
        "INSERT INTO policy_sets (tenant_id, version, policies, policy_ids, status, created_by) VALUES ('containerco', 99, 'permit(principal, action, resource);', '{}', 'active', 'intruder')";
      expect(await sqlAs(t, "gateway", "SELECT count(*) FROM policy_sets")).toBe("ok");
      expect(await sqlAs(t, "gateway", writePolicySet)).toBe("42501");
      expect(await sqlAs(t, "tool-exec", "SELECT id, tenant_id, created_by FROM runs LIMIT 1")).toBe("ok");
      expect(await sqlAs(t, "tool-exec", "SELECT input FROM runs LIMIT 1")).toBe("42501");
      expect(await sqlAs(t, "agent-runner", "SELECT count(*) FROM kb_documents")).toBe("42501");
    });
  });
});

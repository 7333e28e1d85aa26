import { toolFingerprint } from "@steward/contract";
import { outage } from "../support/faults/report";
import { runContainerFault, type ContainerFaultReport } from "./support/fault-run";
import { startTopology, type ServiceName, type Topology } from "./support/topology";

// Steward's own containers fail under 30 multi-step runs in flight, with three agent-runners: a runner
// killed, tool-exec killed, policy killed (tool calls fail closed meanwhile: nothing runs without a permit),
// a runner cut off the network for 20 s. Every run must end once, no event lost, no side effect repeated.

jest.setTimeout(600_000);

describe("Steward as containers survives losing its services", () => {
  let t: Topology;

  beforeAll(async () => {
    t = await startTopology({ runners: 3 });
  });

  afterAll(async () => {
    await t?.teardown();
  });

  function expectClean(report: ContainerFaultReport): void {
    expect(report.violations).toEqual([]);
    expect(report.states).toEqual({ succeeded: report.runs });
  }

  /** The runner holding the most running runs' leases now. */
  async function busiestRunner(topology: Topology): Promise<ServiceName> {
    const { rows } = await topology.pool.query<{ owner: string }>(
      "SELECT lease_owner AS owner FROM runs WHERE state = 'running' AND lease_owner IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC LIMIT 1",
    );
    const owner = rows[0]?.owner as ServiceName | undefined;
    if (!owner || !topology.services.has(owner)) throw new Error(`no runner holds a running run (found ${owner ?? "none"})`);
    return owner;
  }

  it("the runner driving the most runs killed while two others run; started again 10 s later", async () => {
    let victim: ServiceName = "agent-runner-1";
    expectClean(
      await runContainerFault(t, {
        name: "runner container killed",
        touches: (topology) => [topology.services.get(victim)!.container],
        async inject(topology) {
          victim = await busiestRunner(topology);
          const { container } = topology.services.get(victim)!;
          await topology.kill(container);
          await outage(10_000);
          await topology.start(container);
          await topology.waitReady(victim);
        },
      }),
    );
  });

  it("tool-exec killed, started again after 3 s", async () => {
    expectClean(
      await runContainerFault(t, {
        name: "tool-exec container killed",
        touches: (topology) => [topology.services.get("tool-exec")!.container],
        async inject(topology) {
          const { container } = topology.services.get("tool-exec")!;
          await topology.kill(container);
          await outage(3_000);
          await topology.start(container);
          await topology.waitReady("tool-exec");
        },
      }),
    );
  });

  it("policy killed for 10 s: no tool runs without a permit meanwhile, and every run ends once it is back", async () => {
    let down = { from: new Date(0), to: new Date(0) };
    const report = await runContainerFault(t, {
      name: "policy container killed 10 s",
      touches: (topology) => [topology.services.get("policy")!.container],
      async inject(topology) {
        const { container } = topology.services.get("policy")!;
        await topology.kill(container);
        const from = new Date();
        await outage(10_000);
        down = { from, to: new Date() };
        await topology.start(container);
        await topology.waitReady("policy");
      },
    });
    expectClean(report);
    // Fail closed: a side effect recorded while policy was down (test_counter records it after its delay) is
    // a call permitted before the kill: a permit for that very call (run and fingerprint) predates the outage.
    const keys = Array.from({ length: t.toolSteps }, (_, i) => `k${i + 1}`);
    const fingerprints = keys.map((key) => toolFingerprint("test_counter", { key, delay_ms: 700 }));
    const { rows } = await t.pool.query<{ during: number; unpermitted: number }>(
      `SELECT count(*)::int AS during,
              count(*) FILTER (WHERE NOT EXISTS (
                SELECT 1 FROM policy_decisions d
                 WHERE d.run_id = s.run_id AND d.resource_type = 'tool' AND d.resource_id = 'test_counter' AND d.permit
                   AND d.fingerprint = f.fp AND d.decided_at < $4))::int AS unpermitted
         FROM test_side_effects s JOIN unnest($2::text[], $3::text[]) AS f(key, fp) ON f.key = s.key
        WHERE s.run_id = ANY($1::uuid[]) AND s.first_at BETWEEN $4 AND $5`,
      [report.runIds, keys, fingerprints, down.from, down.to],
    );
    console.info(`side effects recorded while policy was down: ${rows[0].during}; of them without a permit from before the kill: ${rows[0].unpermitted}`);
    expect(rows[0].unpermitted).toBe(0);
  });

  it("the busiest runner cut off the network for 20 s, then reconnected: its runs are taken over and it does not repeat them", async () => {
    let victim: ServiceName = "agent-runner-1";
    expectClean(
      await runContainerFault(t, {
        name: "runner network cut 20 s",
        touches: () => [],
        async inject(topology) {
          victim = await busiestRunner(topology);
          const { container } = topology.services.get(victim)!;
          await topology.disconnect(container);
          await outage(20_000);
          await topology.reconnect(container, victim);
        },
      }),
    );
    await t.waitReady(victim);
  });
});

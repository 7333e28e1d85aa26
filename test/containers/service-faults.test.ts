import { outage } from "../support/faults/report";
import { permitTimes, permitsBefore } from "../support/faults/side-effects";
import { noteEffects } from "./support/note-effects";
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
    // Fail closed: a note saved while policy was down is a call permitted before the kill: a permit for that very
    // call (run and fingerprint) predates the outage.
    const [from, to] = [BigInt(down.from.getTime()) * 1000n, BigInt(down.to.getTime()) * 1000n];
    const during = (await noteEffects.read(t.pool, report.runIds ?? [])).filter((e) => BigInt(e.first_us) >= from && BigInt(e.first_us) <= to);
    const permits = await permitTimes(t.pool, report.runIds ?? [], noteEffects.tool);
    const unpermitted = during.filter((e) => permitsBefore(permits, e, String(from)) === 0);
    console.info(`notes saved while policy was down: ${during.length}; of them without a permit from before the kill: ${unpermitted.length}`);
    expect(unpermitted).toEqual([]);
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

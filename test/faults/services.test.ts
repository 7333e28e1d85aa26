import { useFaultCluster } from "../support/faults/fault-cluster";
import { reverseOrder, type ServiceName } from "../support/faults/fault-platform";
import { runFaultScenario } from "../support/faults/scenario";

jest.setTimeout(240_000);

/** Each service killed (SIGKILL) under 30 runs of three tool steps and started again on its address; a restart in reverse order. */
describe("faults: services", () => {
  const cluster = useFaultCluster();

  it.each(["agent-runner", "tool-exec", "policy", "gateway"] as ServiceName[])("kill -9 of %s, started again", async (service) => {
    const report = await runFaultScenario(cluster(), {
      name: `kill -9 ${service}`,
      kills: [service],
      async inject({ platform }) {
        await platform.kill9(service);
        await platform.restart(service);
      },
    });
    expect(report.violations).toEqual([]);
  });

  it("every service stopped, then started in reverse order (gateway, agent-runner, tool-exec, policy)", async () => {
    const report = await runFaultScenario(cluster(), {
      name: "restart in reverse order",
      kills: [...reverseOrder],
      async inject({ platform }) {
        await platform.stopAll();
        await platform.startInOrder(reverseOrder);
      },
    });
    expect(report.violations).toEqual([]);
  });
});

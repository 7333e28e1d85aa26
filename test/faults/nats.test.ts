import { useFaultCluster } from "../support/faults/fault-cluster";
import { outage, runFaultScenario } from "../support/faults/scenario";

jest.setTimeout(240_000);

/** nats-server under 30 runs of three tool steps: killed and started again, or down for 20 s. */
describe("faults: NATS", () => {
  const cluster = useFaultCluster();

  it("kill -9 of nats-server, started again at once (same port and store)", async () => {
    const report = await runFaultScenario(cluster(), {
      name: "nats-server kill -9 and restart",
      async inject({ cluster: c }) {
        await c.nats.kill9();
        await c.nats.start();
      },
    });
    expect(report.violations).toEqual([]);
  });

  it("nats-server down for 20 s (stopped, then started on the same port and store)", async () => {
    const report = await runFaultScenario(cluster(), {
      name: "nats down 20 s",
      async inject({ cluster: c }) {
        await c.nats.stop();
        try {
          await outage(20_000);
        } finally {
          await c.nats.start();
        }
      },
    });
    expect(report.violations).toEqual([]);
  });
});

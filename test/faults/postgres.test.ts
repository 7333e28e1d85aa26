import { useFaultCluster } from "../support/faults/fault-cluster";
import { outage, runFaultScenario } from "../support/faults/scenario";

jest.setTimeout(240_000);

/** PostgreSQL under 30 runs of three tool steps: restarted (fast, immediate) or unreachable for 20 s. */
describe("faults: PostgreSQL", () => {
  const cluster = useFaultCluster();

  it("a fast restart of PostgreSQL", async () => {
    const report = await runFaultScenario(cluster(), { name: "postgres restart (fast)", inject: ({ cluster: c }) => c.pg.restart("fast") });
    expect(report.violations).toEqual([]);
  });

  it("an immediate restart of PostgreSQL (crash recovery)", async () => {
    const report = await runFaultScenario(cluster(), { name: "postgres restart (immediate)", inject: ({ cluster: c }) => c.pg.restart("immediate") });
    expect(report.violations).toEqual([]);
  });

  it("PostgreSQL unreachable for 20 s (connections reset, new ones get no answer)", async () => {
    let refused: { status: number; body: any } | undefined;
    const report = await runFaultScenario(cluster(), {
      name: "postgres unreachable 20 s",
      async inject({ cluster: c, platform }) {
        c.pgProxy.cut("blackhole");
        try {
          // Meanwhile a new run is refused with 503 (try again), never a 500; nothing is accepted and lost.
          refused = await platform.http("POST", "/v1/agents/runs", { input: "while the database is away" });
          await outage(20_000);
        } finally {
          c.pgProxy.restore();
        }
      },
    });
    expect(report.violations).toEqual([]);
    expect([refused?.status, refused?.body.code]).toEqual([503, 10503]);
  });
});

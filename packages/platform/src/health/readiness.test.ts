import { createReadiness, down, up } from "./readiness";

describe("readiness", () => {
  it("is ready when every check passes and no start-up phase is pending", async () => {
    const r = createReadiness();
    r.add("postgres", () => up);
    r.add("nats", async () => up);
    expect(await r.report()).toEqual({ ready: true, checks: { postgres: up, nats: up }, reasons: [] });
  });

  it("names each failing check with its reason: down, thrown, too slow, or a phase not done", async () => {
    const r = createReadiness({ checkTimeoutMs: 50 });
    r.add("postgres", () => down("PostgreSQL is unreachable (57P01)"));
    r.add("nats", () => {
      throw new TypeError("boom with a secret");
    });
    r.add("tool-exec", () => new Promise(() => undefined));
    const phase = r.pending("start", "connecting to NATS");
    const report = await r.report();
    expect(report.ready).toBe(false);
    expect(report.reasons).toEqual([
      "postgres: PostgreSQL is unreachable (57P01)",
      "nats: TypeError",
      "tool-exec: no answer within 50 ms",
      "start: connecting to NATS",
    ]);
    phase.done();
    r.add("postgres", () => up);
    r.add("nats", () => up);
    r.add("tool-exec", () => up);
    expect((await r.report()).ready).toBe(true);
  });
});

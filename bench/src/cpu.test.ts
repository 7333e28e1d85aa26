import { spawn } from "node:child_process";
import { cpuMeter, cpuNow } from "./cpu";

describe("cpuNow and cpuMeter", () => {
  it("given the default, then PostgreSQL and nats-server are counted beside the named processes", () => {
    const now = cpuNow({ self: process.pid });
    expect(Object.keys(now).sort()).toEqual(["nats-server", "postgres", "self"]);
  });

  it("given a platform that does not use NATS, then nats-server is left out and the rest is counted as before", () => {
    const now = cpuNow({ self: process.pid }, { nats: false });
    expect(Object.keys(now).sort()).toEqual(["postgres", "self"]);
  });

  it("given a named process that works for a while, then the meter counts its CPU and leaves nats-server out when asked", async () => {
    // A real child spinning for 300 ms of wall time, then exiting once told.
    const child = spawn(
      process.execPath,
      ["-e", `const end = Date.now() + 300; while (Date.now() < end); process.stdout.write("done\\n"); process.stdin.resume();`],
      {
        stdio: ["pipe", "pipe", "inherit"],
      },
    );
    try {
      const meter = cpuMeter({ child: child.pid! }, { nats: false });
      await new Promise<void>((resolve, reject) => {
        child.stdout!.once("data", () => resolve());
        child.once("exit", (code) => reject(new Error(`the child exited early (${code})`)));
      });
      const spent = meter.stop();
      expect(spent["nats-server"]).toBeUndefined();
      expect(spent.child).toBeGreaterThan(0);
    } finally {
      child.kill("SIGKILL");
    }
  });
});

import { spawn } from "node:child_process";
import { childAnswers } from "./child-answers";

/** A real child process running `script`, its stdio piped. */
const child = (script: string) => spawn(process.execPath, ["-e", script], { stdio: ["pipe", "pipe", "pipe"] });

describe("childAnswers", () => {
  it("given a child that writes other lines and its answers out of order, then each awaited answer gets its own message", async () => {
    const c = child(`console.log("starting"); console.log(JSON.stringify({ msg: "b", n: 2 })); console.log(JSON.stringify({ msg: "a", n: 1 }));`);
    const next = childAnswers(c, "the child");
    expect(await next("a", 10_000)).toEqual({ msg: "a", n: 1 });
    expect(await next("b", 10_000)).toEqual({ msg: "b", n: 2 });
  });

  it("given a child that ends without the answer, then the wait fails with its exit status and its stderr", async () => {
    const c = child(`process.stderr.write("peer failed: no database\\n"); process.exit(3);`);
    const next = childAnswers(c, "the child");
    await expect(next("result", 10_000)).rejects.toThrow(/the child exited \(code 3, signal null\)\nstderr: peer failed: no database/);
  });

  it("given a child that is alive but silent, then the wait fails once its time is up", async () => {
    const c = child(`process.stdin.resume();`); // alive until killed, saying nothing
    const next = childAnswers(c, "the child");
    try {
      await expect(next("window", 200)).rejects.toThrow("the child sent no window within 200 ms");
    } finally {
      c.kill("SIGKILL");
    }
  });
});

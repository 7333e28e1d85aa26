import { spawn, type ChildProcess } from "node:child_process";

export interface Child {
  readonly child: ChildProcess;
  /** The first stdout line parsed as JSON whose `msg` is the ready message. */
  readonly ready: Record<string, unknown>;
  stop(): Promise<void>;
}

/** Spawns `node <script> ...args` and resolves once it prints `{"msg": readyMsg, ...}` (bounded); `stdin` gives it a pipe to read. */
export function spawnNode(
  script: string,
  args: string[],
  options: { readyMsg?: string; timeoutMs?: number; nodeArgs?: string[]; env?: Record<string, string>; stdin?: boolean } = {},
): Promise<Child> {
  const readyMsg = options.readyMsg ?? "listening";
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(options.nodeArgs ?? []), script, ...args], {
      stdio: [options.stdin ? "pipe" : "ignore", "pipe", "pipe"],
      env: { ...process.env, ...options.env },
    });
    let out = "";
    let err = "";
    let settled = false;
    const timer = setTimeout(() => fail(new Error(`${script} was not ready within ${options.timeoutMs ?? 30_000} ms`)), options.timeoutMs ?? 30_000);
    function fail(e: Error) {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill("SIGKILL");
      e.message += `\nstderr: ${err.slice(-2000)}`;
      reject(e);
    }
    child.stdout!.on("data", (chunk: Buffer) => {
      if (settled) return;
      out += chunk.toString("utf8");
      for (const line of out.split("\n")) {
        try {
          const parsed = JSON.parse(line) as Record<string, unknown>;
          if (parsed.msg === readyMsg) {
            settled = true;
            clearTimeout(timer);
            resolve({ child, ready: parsed, stop: () => stopChild(child) });
            return;
          }
        } catch {
          // not (yet) a JSON line
        }
      }
    });
    child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
    child.on("exit", (code, signal) => fail(new Error(`${script} exited (code ${code}, signal ${signal})`)));
  });
}

/** Asks a child to stop, and kills it after a grace period: the launcher's, shared with `npm start` and the tests. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const stopChild = (require("../../infra/local/launcher.cjs") as { stopChild(child: ChildProcess, graceMs?: number): Promise<void> }).stopChild;

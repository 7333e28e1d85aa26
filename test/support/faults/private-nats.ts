import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./free-port";
import { waitFor } from "../wait-for";
import { started } from "./started";

/** A `nats-server -js` of the suite's own, on a free port with its own store, that a test may kill and start. */
export interface PrivateNats {
  readonly port: number;
  /** The monitoring port (`/jsz` answers once JetStream has recovered its store). */
  readonly monitorPort: number;
  /** The server's URL, straight (not through a proxy). */
  readonly url: string;
  /** Starts the server on the same port and store; resolves once it accepts connections. */
  start(): Promise<void>;
  /** SIGKILL, and waits until the process is gone. */
  kill9(): Promise<void>;
  /** SIGTERM (a clean shutdown), and waits until the process is gone. */
  stop(): Promise<void>;
  logTail(lines?: number): string;
  /** Kills the server and removes its store; safe to call twice. */
  teardown(): Promise<void>;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

export async function startPrivateNats(): Promise<PrivateNats> {
  const port = await freePort();
  const monitorPort = await freePort();
  const storeDir = mkdtempSync(join(tmpdir(), "steward-fault-nats-"));
  let child: ChildProcess | null = null;
  let log: string[] = [];
  let tornDown = false;
  const onExit = () => child?.kill("SIGKILL");
  process.once("exit", onExit);

  const gone = (c: ChildProcess): Promise<void> =>
    c.exitCode !== null || c.signalCode !== null ? Promise.resolve() : new Promise((resolve) => c.once("exit", () => resolve()));

  const self: PrivateNats = {
    port,
    monitorPort,
    url: `nats://127.0.0.1:${port}`,
    async start() {
      if (child && child.exitCode === null && child.signalCode === null) throw new Error("nats-server is already running");
      const c = spawn("nats-server", ["-js", "-sd", storeDir, "-p", String(port), "-a", "127.0.0.1", "-m", String(monitorPort)], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      child = c;
      const keep = (chunk: Buffer) => {
        log.push(...chunk.toString("utf8").split("\n").filter(Boolean));
        if (log.length > 500) log = log.slice(-500);
      };
      c.stdout!.on("data", keep);
      c.stderr!.on("data", keep);
      await waitFor(
        async () => {
          if (c.exitCode !== null || c.signalCode !== null) throw new Error(`nats-server exited: ${log.slice(-10).join("\n")}`);
          // Ready when clients are accepted and JetStream has recovered its store (the monitor answers /jsz).
          if (!(await accepts(port))) return undefined;
          const res = await fetch(`http://127.0.0.1:${monitorPort}/jsz`).catch(() => undefined);
          return res?.ok ? true : undefined;
        },
        { timeoutMs: 30_000, what: `nats-server on port ${port}` },
      );
    },
    async kill9() {
      const c = child;
      if (!c) return;
      c.kill("SIGKILL");
      await gone(c);
    },
    async stop() {
      const c = child;
      if (!c) return;
      c.kill("SIGTERM");
      await gone(c);
    },
    logTail(lines = 30) {
      return log.slice(-lines).join("\n");
    },
    async teardown() {
      if (tornDown) return;
      tornDown = true;
      process.removeListener("exit", onExit);
      await self.kill9();
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
  return started(self);
}

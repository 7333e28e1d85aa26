import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect as tcpConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { natsInboxPrefix, natsServerConfig, serviceIdentities, type ServiceIdentity } from "@steward/platform";
import { freePort } from "./faults/free-port";
import { waitFor } from "./wait-for";

export type NatsUser = ServiceIdentity | "operator";

/** A nats-server of the test's own, run with Steward's generated configuration: a user per service. */
export interface SecuredNats {
  readonly url: string;
  readonly namespace: string;
  readonly passwords: Readonly<Record<NatsUser, string>>;
  /** A connection as `user` (its own inbox prefix, as the services use), or anonymous; no reconnects. */
  connectAs(user: NatsUser | null): Promise<NatsConnection>;
  /** What the server logged (permission violations are logged there). */
  log(): string;
  stop(): Promise<void>;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: "127.0.0.1", port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** Starts `nats-server -js -c <generated file>` on a free port with a fresh store, for `namespace`. */
export async function startSecuredNats(namespace: string): Promise<SecuredNats> {
  const dir = mkdtempSync(join(tmpdir(), "steward-secured-nats-"));
  const passwords = Object.fromEntries([...serviceIdentities, "operator"].map((u) => [u, randomBytes(18).toString("base64url")])) as Record<NatsUser, string>;
  const configFile = join(dir, "nats-server.conf");
  writeFileSync(configFile, natsServerConfig({ namespace, passwords }), { mode: 0o600 });
  const port = await freePort();
  let output = "";
  const child: ChildProcess = spawn("nats-server", ["-c", configFile, "-js", "-sd", join(dir, "store"), "-a", "127.0.0.1", "-p", String(port)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const keep = (chunk: Buffer) => (output += chunk.toString("utf8"));
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const onExit = () => child.kill("SIGKILL");
  process.once("exit", onExit);
  const stop = async () => {
    process.removeListener("exit", onExit);
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill("SIGTERM");
      await gone;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`nats-server exited: ${output.slice(-2000)}`);
        return (await accepts(port)) && /Server is ready/.test(output) ? true : undefined;
      },
      { timeoutMs: 30_000, what: `nats-server on port ${port}` },
    );
  } catch (err) {
    await stop();
    throw err;
  }
  const url = `nats://127.0.0.1:${port}`;
  return {
    url,
    namespace,
    passwords,
    connectAs: (user) =>
      connect({
        servers: `127.0.0.1:${port}`,
        ...(user ? { user, pass: passwords[user] } : {}),
        ...(user && user !== "operator" ? { inboxPrefix: natsInboxPrefix(user) } : {}),
        reconnect: false,
        name: `test-${user ?? "anonymous"}`,
      }),
    log: () => output,
    stop,
  };
}

import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/**
 * Where the kernel picks the local ports of outgoing connections (and of `listen(0)`): a port taken from that
 * range could be handed to some connection between our check and the service's bind (seen in CI as
 * EADDRINUSE on a service's first start), so ports are taken below it.
 */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 2048 ? low : 32768;
  } catch {
    return 32768;
  }
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/**
 * A TCP port on 127.0.0.1 that was free a moment ago, below the ephemeral range (so no outgoing connection can
 * take it meanwhile), picked at random so that parallel callers rarely pick the same; the caller binds it next.
 */
export async function freePort(): Promise<number> {
  const high = ephemeralLow();
  const low = Math.max(1024, high - 10_000);
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port found between ${low} and ${high}`);
}

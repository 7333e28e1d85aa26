import { connect, createServer, type Server, type Socket } from "node:net";
import { freePort } from "./free-port";

/** What happens to connections opened while the proxy is cut. */
export type CutMode =
  /** Accepted and held without a byte either way (a network partition); forwarded once restored. */
  | "blackhole"
  /** Reset at once (a host that answers but refuses). */
  | "refuse";

/** A TCP forwarder in front of a server, so a test can make the server unreachable without touching it. */
export interface TcpProxy {
  readonly port: number;
  /** Connections forwarded now. */
  readonly open: number;
  /** Resets every open connection and holds or refuses new ones until `restore()`. */
  cut(mode?: CutMode): void;
  /** Forwards again, including connections held while cut. */
  restore(): void;
  close(): Promise<void>;
}

/** Starts a proxy on a free port of 127.0.0.1 that forwards every connection to `target`. */
export async function startTcpProxy(target: { host?: string; port: number }): Promise<TcpProxy> {
  const port = await freePort();
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  let held: Socket[] = [];
  let cutMode: CutMode | null = null;

  function forward(client: Socket): void {
    const upstream = connect({ host: target.host ?? "127.0.0.1", port: target.port });
    const pair = { client, upstream };
    pairs.add(pair);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    client.pipe(upstream);
    upstream.pipe(client);
    // An error on one side resets the other; a close on one side closes the other (ends travel through pipe).
    const reset = (s: Socket) => {
      if (!s.destroyed) s.resetAndDestroy();
    };
    client.on("error", () => reset(upstream));
    upstream.on("error", () => reset(client));
    const drop = () => pairs.delete(pair);
    client.once("close", () => {
      drop();
      upstream.destroy();
    });
    upstream.once("close", () => {
      drop();
      client.destroy();
    });
  }

  const server: Server = createServer({ pauseOnConnect: true }, (client) => {
    client.on("error", () => undefined);
    if (cutMode === "refuse") {
      client.resetAndDestroy();
      return;
    }
    if (cutMode === "blackhole") {
      held.push(client);
      client.once("close", () => (held = held.filter((s) => s !== client)));
      return;
    }
    forward(client);
    client.resume();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });

  return {
    port,
    get open() {
      return pairs.size;
    },
    cut(mode = "blackhole") {
      cutMode = mode;
      for (const { client, upstream } of [...pairs]) {
        if (!client.destroyed) client.resetAndDestroy();
        if (!upstream.destroyed) upstream.resetAndDestroy();
      }
      pairs.clear();
    },
    restore() {
      cutMode = null;
      const waiting = held;
      held = [];
      for (const client of waiting) {
        if (client.destroyed) continue;
        forward(client);
        client.resume();
      }
    },
    close() {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      for (const s of held) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

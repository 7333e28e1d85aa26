import { createConnection } from "node:net";

// Reading what containers say: their log stream as the engine frames it, and whether a server greets a client.

/** A container's log as the engine sends it without a TTY: chunks framed by an 8-byte header. */
export function demux(raw: Buffer): string {
  const out: string[] = [];
  for (let i = 0; i + 8 <= raw.length;) {
    const size = raw.readUInt32BE(i + 4);
    out.push(raw.subarray(i + 8, i + 8 + size).toString("utf8"));
    i += 8 + size;
  }
  return out.join("");
}

/**
 * True once a connection to host:port opens and the server speaks first with `greeting` (NATS sends its INFO line
 * at once), else undefined (for waitFor). A port translation left from before a restart can take a connection that
 * nobody answers: each try gives up after 2 s.
 */
export function greets(host: string, port: number, greeting: string): Promise<true | undefined> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    socket.setTimeout(2000);
    const done = (value: true | undefined) => {
      socket.destroy();
      resolve(value);
    };
    socket.once("data", (chunk) => done(chunk.toString("latin1").startsWith(greeting) ? true : undefined));
    socket.once("error", () => done(undefined));
    socket.once("timeout", () => done(undefined));
    socket.once("end", () => done(undefined));
  });
}

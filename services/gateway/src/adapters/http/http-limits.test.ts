import { connect, type Socket } from "node:net";
import type { FastifyInstance } from "fastify";
import { createLogger } from "@steward/platform";
import { buildApp, type AppDeps } from "./app";
import type { HttpLimits } from "./http-limits";

async function listening(http: HttpLimits): Promise<{ app: FastifyInstance; port: number }> {
  const app = buildApp({ logger: createLogger("gateway-test", "silent"), http } as unknown as AppDeps);
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address();
  if (!address || typeof address === "string") throw new Error("no port");
  return { app, port: address.port };
}

/**
 * Everything the server sends until it closes the socket, and how long that took since `started` (by default now:
 * a timer the server starts on the connection needs the time read before connecting); fails past `boundMs`.
 */
function untilClosed(socket: Socket, boundMs: number, started = Date.now()): Promise<{ received: string; afterMs: number }> {
  let received = "";
  socket.on("data", (chunk) => (received += chunk.toString("latin1")));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept the socket open for ${boundMs} ms`));
    }, boundMs);
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ received, afterMs: Date.now() - started });
    });
    socket.on("error", () => undefined);
  });
}

/** What the server sent once `done` holds for it; fails past `boundMs`. */
function untilReceived(socket: Socket, done: (received: string) => boolean, boundMs: number): Promise<string> {
  let received = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not received within ${boundMs} ms: ${JSON.stringify(received)}`)), boundMs);
    socket.on("data", (chunk) => {
      received += chunk.toString("latin1");
      if (done(received)) {
        clearTimeout(timer);
        resolve(received);
      }
    });
  });
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => resolve(socket));
    socket.once("error", reject);
  });
}

describe("HTTP limits", () => {
  const apps: FastifyInstance[] = [];
  afterAll(async () => {
    for (const app of apps) await app.close();
  });

  it("answers 408 and closes a request that is not received within requestTimeout", async () => {
    const { app, port } = await listening({ requestTimeoutMs: 400 });
    apps.push(app);
    const socket = await open(port);
    // Headers that never end: a slow client holding a connection.
    socket.write("POST /v1/agents/runs HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n");
    const { received, afterMs } = await untilClosed(socket, 5_000);
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(afterMs).toBeGreaterThanOrEqual(300);
  });

  it("destroys a socket with no traffic after connectionTimeout", async () => {
    const { app, port } = await listening({ connectionTimeoutMs: 300, requestTimeoutMs: 60_000 });
    apps.push(app);
    const connecting = Date.now();
    const socket = await open(port);
    const { received, afterMs } = await untilClosed(socket, 5_000, connecting);
    expect(received).toBe("");
    expect(afterMs).toBeGreaterThanOrEqual(250);
  });

  it("closes an idle keep-alive connection after keepAliveTimeout", async () => {
    const { app, port } = await listening({ keepAliveTimeoutMs: 300 });
    apps.push(app);
    const socket = await open(port);
    socket.write("GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n");
    const { received, afterMs } = await untilClosed(socket, 5_000);
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
    expect(afterMs).toBeGreaterThanOrEqual(250);
  });

  it("ends a connection's keep-alive after maxRequestsPerSocket requests", async () => {
    const { app, port } = await listening({ maxRequestsPerSocket: 2 });
    apps.push(app);
    const socket = await open(port);
    const request = "GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n";
    socket.write(request + request);
    const received = await untilReceived(socket, (r) => (r.match(/HTTP\/1\.1 /g) ?? []).length === 2, 5_000);
    socket.destroy();
    const [first, second] = received.split(/(?=HTTP\/1\.1 )/);
    expect(first).toMatch(/^HTTP\/1\.1 200 [\s\S]*keep-alive: timeout=\d+, max=2/i);
    expect(second).toMatch(/^HTTP\/1\.1 200 [\s\S]*connection: close/i);
  });
});

import { connect } from "node:net";
import Fastify, { type FastifyInstance } from "fastify";
import { createLogger } from "@steward/platform";
import { answerUnmetExpectation, handleClientError, requireHost } from "./client-errors";
import { createErrorHandler } from "./problem";

/** A server wired as the gateway wires these answers, with one route. */
async function listening(): Promise<{ app: FastifyInstance; port: number }> {
  const app = Fastify({ clientErrorHandler: handleClientError, requestTimeout: 300, http: { requireHostHeader: false, connectionsCheckingInterval: 50 } });
  app.setErrorHandler(createErrorHandler(createLogger("gateway-test", "silent")));
  app.server.on("checkExpectation", answerUnmetExpectation);
  app.addHook("onRequest", requireHost);
  app.get("/healthz", async () => ({ status: "ok" }));
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address();
  if (!address || typeof address === "string") throw new Error("no port");
  return { app, port: address.port };
}

/** Sends bytes and returns everything received until the server closes the connection (bounded). */
function exchange(port: number, bytes: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(bytes));
    let received = "";
    const timer = setTimeout(() => (socket.destroy(), reject(new Error(`no answer within 5 s: ${JSON.stringify(received)}`))), 5_000);
    socket.on("data", (chunk) => (received += chunk.toString("latin1")));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(timer);
      const [head, body = ""] = received.split("\r\n\r\n");
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), headers: head, body });
    });
  });
}

describe("answers to requests refused before routing", () => {
  let app: FastifyInstance;
  let port: number;
  beforeAll(async () => ({ app, port } = await listening()));
  afterAll(() => app.close());

  it.each([
    ["an unknown method", "FUZZ /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 400, 10001],
    ["a lower-case method", "get /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 400, 10001],
    ["a header line without a colon", "GET /healthz HTTP/1.1\r\nHost: x\r\nBad\r\n\r\n", 400, 10001],
    [
      "Content-Length beside Transfer-Encoding",
      "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
      400,
      10001,
    ],
    ["an HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400, 10001],
    ["a head over Node's limit", `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"h".repeat(20_000)}\r\n\r\n`, 431, 10431],
    ["an Expect other than 100-continue", "POST /healthz HTTP/1.1\r\nHost: x\r\nExpect: 42-fuzz\r\nContent-Length: 0\r\n\r\n", 417, 10417],
    ["an HTTP/1.1 request without Host", "GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n", 400, 10001],
    ["a head that never ends (requestTimeout)", "GET /healthz HTTP/1.1\r\nHost: x\r\n", 408, 10408],
  ])("answers %s with a problem document and closes", async (_label, bytes, status, code) => {
    const answer = await exchange(port, bytes);
    expect(answer.status).toBe(status);
    expect(answer.headers).toMatch(/content-type: application\/problem\+json/i);
    expect(JSON.parse(answer.body)).toMatchObject({ status, code });
  });

  it("serves a well-formed request as before, HTTP/1.0 without Host included", async () => {
    expect((await exchange(port, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")).status).toBe(200);
    expect((await exchange(port, "GET /healthz HTTP/1.0\r\n\r\n")).status).toBe(200);
  });
});

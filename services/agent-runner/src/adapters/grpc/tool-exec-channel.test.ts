import dns from "node:dns";
import net from "node:net";
import { Server, ServerCredentials } from "@grpc/grpc-js";
import { CallStreams, serveCallStream, type grpc } from "@steward/platform";
import { createToolExecApi, InvokeRequest, InvokeResponse, ToolExecService, type ToolExecApi } from "@steward/proto";
import { waitFor } from "../../../../../test/support/wait-for";
import { withPatience } from "./patient-tool-exec";

// tool-exec coming back on another address, as a container started again does: real gRPC servers on one
// port of two loopback addresses, and a name that moves from the first to the second. Only the name service
// is the test's: grpc-js asks node's dns.promises.lookup, which answers for "tool-exec.test" here.

const NAME = "tool-exec.test";
let address = "127.0.0.1";

beforeAll(() => {
  const lookup = dns.promises.lookup.bind(dns.promises);
  jest
    .spyOn(dns.promises, "lookup")
    .mockImplementation(((host: string, options: dns.LookupAllOptions) =>
      host === NAME ? Promise.resolve([{ address, family: 4 }]) : lookup(host, options)) as never);
});

afterAll(() => jest.restoreAllMocks());

const permit = InvokeResponse.fromPartial({ decision: { permit: true, code: "", reasons: [], policyIds: [] }, resultCode: "ok", resultJson: "{}" });

async function toolExec(host: string, port: number): Promise<{ port: number; stop(): void }> {
  const server = new Server();
  server.addService(ToolExecService, {
    listTools: (_call: unknown, cb: (err: null, res: object) => void) => cb(null, { tools: [] }),
    invoke: (_call: unknown, cb: (err: null, res: object) => void) => cb(null, permit),
    invokeEach: serveCallStream(
      new CallStreams(),
      () => Promise.resolve(permit),
      (err) => err as grpc.ServiceError,
    ),
  });
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return { port: bound, stop: () => server.forceShutdown() };
}

/** Takes TCP connections and never answers on them: a connect that does not complete, as to a container that is gone. */
async function blackHole(host: string): Promise<{ port: number; stop(): void }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => sockets.add(s));
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    stop: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

const request = InvokeRequest.fromPartial({ runId: "r", toolName: "test_counter", argumentsJson: "{}" });
const answers = (api: ToolExecApi) => async () =>
  (await api.invoke(request, { deadlineMs: 500 }).catch(() => undefined))?.decision?.permit ? true : undefined;

describe("the runner's channel to tool-exec, when tool-exec comes back on another address", () => {
  const stops: Array<() => void> = [];
  afterEach(() => {
    for (const stop of stops.splice(0)) stop();
  });

  it("finds it within seconds, not after grpc-js's 30 s between name resolutions", async () => {
    address = "127.0.0.1";
    const first = await toolExec("127.0.0.1", 0);
    const api = createToolExecApi(`${NAME}:${first.port}`);
    stops.push(() => api.close());
    await waitFor(answers(api), { timeoutMs: 5000, what: "the first tool-exec to answer" });

    first.stop();
    address = "127.0.0.2";
    const second = await toolExec("127.0.0.2", first.port);
    stops.push(second.stop);
    await waitFor(answers(api), { timeoutMs: 5000, intervalMs: 100, what: "tool-exec on its new address to answer" });
  });

  it("gives up a connect that never completes: a call waiting on it is answered from the new address", async () => {
    address = "127.0.0.1";
    const hole = await blackHole("127.0.0.1");
    stops.push(hole.stop);
    const api = createToolExecApi(`${NAME}:${hole.port}`);
    stops.push(() => api.close());
    // As the runner calls tool-exec: patient, with a long deadline. The call waits on the black hole.
    const answered = withPatience(api, { initialDelayMs: 50 }).invoke(request, { deadlineMs: 20_000 });
    await waitFor(() => (api.state() === "connecting" ? true : undefined), { timeoutMs: 2000, what: "the channel to be connecting" });

    address = "127.0.0.2";
    const server = await toolExec("127.0.0.2", hole.port);
    stops.push(server.stop);
    const movedAt = Date.now();
    // Within the connect timeout (5 s) and a retry; grpc-js alone would wait on the black hole until the deadline.
    expect((await answered).decision?.permit).toBe(true);
    expect(Date.now() - movedAt).toBeLessThan(8000);
  }, 30_000);
});

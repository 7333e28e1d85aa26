// A trivial PolicyDecision server for the gRPC floor, run as its own process: `leaf` answers permit at
// once; `relay <addr>` asks the leaf at <addr> and returns its answer (as tool-exec asks policy).
import { bindGrpc, callStreamsOf, createGrpcServer, type grpc, serveCallStream } from "@steward/platform";
import { PolicyDecisionService, createPolicyDecisionApi, type DecideRequest, type DecideResponse, type PolicyDecisionServer } from "@steward/proto";

async function main(): Promise<void> {
  const [role, next] = process.argv.slice(2);
  const upstream = role === "relay" ? createPolicyDecisionApi(next) : null;
  // A relay asks the leaf the way it was asked: a unary call with a unary call (`waitForReady` calls are unary),
  // a call on a stream on its own stream.
  const answer = (request: DecideRequest, unary = false): Promise<DecideResponse> =>
    upstream
      ? upstream.decide(request, { deadlineMs: 5000, waitForReady: unary })
      : Promise.resolve({ permit: true, code: "", reasons: [], policyIds: ["bench"] });
  const server = createGrpcServer();
  const impl: PolicyDecisionServer = {
    decide(call, callback) {
      answer(call.request, true).then(
        (res) => callback(null, res),
        (err: grpc.ServiceError) => callback(err),
      );
    },
    decideEach: serveCallStream(
      callStreamsOf(server),
      (request: DecideRequest) => answer(request),
      (err) => err as grpc.ServiceError,
    ),
  };
  server.addService(PolicyDecisionService, impl);
  const port = await bindGrpc(server, "127.0.0.1:0");
  process.stdout.write(`${JSON.stringify({ msg: "listening", addr: `127.0.0.1:${port}` })}\n`);
  const stop = () => {
    upstream?.close();
    server.tryShutdown(() => process.exit(0));
    setTimeout(() => process.exit(0), 2000).unref();
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

main().catch((err) => {
  process.stderr.write(`grpc floor server failed: ${String(err)}\n`);
  process.exit(1);
});

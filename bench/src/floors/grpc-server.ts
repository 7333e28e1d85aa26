// A trivial PolicyDecision server for the gRPC floor, run as its own process: `leaf` answers permit at
// once; `relay <addr>` asks the leaf at <addr> and returns its answer (as tool-exec asks policy).
import { bindGrpc, createGrpcServer, grpc } from "@steward/platform";
import { PolicyDecisionService, createPolicyDecisionApi, type PolicyDecisionServer } from "@steward/proto";

async function main(): Promise<void> {
  const [role, next] = process.argv.slice(2);
  const upstream = role === "relay" ? createPolicyDecisionApi(next) : null;
  const impl: PolicyDecisionServer = {
    decide(call, callback) {
      if (!upstream) {
        callback(null, { permit: true, code: "", reasons: [], policyIds: ["bench"] });
        return;
      }
      upstream.decide(call.request, { deadlineMs: 5000 }).then(
        (res) => callback(null, res),
        (err: grpc.ServiceError) => callback(err),
      );
    },
  };
  const server = createGrpcServer();
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

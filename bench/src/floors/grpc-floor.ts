import { join } from "node:path";
import { createPolicyDecisionApi, type DecideRequest, type PolicyDecisionApi } from "@steward/proto";
import { spawnNode } from "../child";
import { summarize, type Summary } from "../stats";

export interface GrpcFloor {
  /** client → server, unary, over loopback. */
  readonly oneHop: Summary;
  /** client → relay → leaf (runner → tool-exec → policy), each a separate process. */
  readonly chained: Summary;
}

// What tool-exec sends the PDP on every tool call.
const REQUEST: DecideRequest = {
  principal: { tenantId: "bench", userId: "u1", roles: [], rolesFromToken: false },
  action: "knowledge.document.read",
  resource: { type: "tool", id: "test_counter" },
  context: { run_id: "00000000-0000-4000-8000-000000000000", step_no: "3", fingerprint: "f".repeat(64) },
};

async function sample(api: PolicyDecisionApi, n: number): Promise<number[]> {
  for (let i = 0; i < 300; i++) await api.decide(REQUEST, { deadlineMs: 5000, waitForReady: true }); // warm-up
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await api.decide(REQUEST, { deadlineMs: 5000 });
    out.push(performance.now() - t0);
  }
  return out;
}

/** gRPC unary over loopback with Steward's generated PolicyDecision service: one hop, and a chained pair. */
export async function measureGrpcFloor(options: { samples: number }): Promise<GrpcFloor> {
  const script = join(__dirname, "grpc-server.js");
  const leaf = await spawnNode(script, ["leaf"]);
  const relay = await spawnNode(script, ["relay", String(leaf.ready.addr)]).catch(async (err) => {
    await leaf.stop();
    throw err;
  });
  const direct = createPolicyDecisionApi(String(leaf.ready.addr));
  const chained = createPolicyDecisionApi(String(relay.ready.addr));
  try {
    return { oneHop: summarize(await sample(direct, options.samples)), chained: summarize(await sample(chained, options.samples)) };
  } finally {
    direct.close();
    chained.close();
    await relay.stop();
    await leaf.stop();
  }
}

import { join } from "node:path";
import { createPolicyDecisionApi, type DecideRequest, type PolicyDecisionApi } from "@steward/proto";
import { spawnNode } from "../child";
import { afterIdle, summarize, type IdlePause, type Summary } from "../stats";

export interface GrpcFloor {
  /** client → server over loopback, each call a message on a call stream (as Steward's services call). */
  readonly oneHop: Summary;
  /** client → relay → leaf (runner → tool-exec → policy), each a separate process. */
  readonly chained: Summary;
  /** The chained pair, each call after an idle pause (as between a serial run's steps). */
  readonly chainedAfterIdle: Summary;
  /**
   * The same two, each call a unary call of its own (an HTTP/2 stream per call): what the step floor counted when
   * the services called that way, so that older results compare. Absent in the oldest results.
   */
  readonly unary?: { readonly oneHop: Summary; readonly chained: Summary };
}

// What tool-exec sends the PDP on every tool call.
const REQUEST: DecideRequest = {
  principal: { tenantId: "bench", userId: "u1", roles: [], rolesFromToken: false },
  action: "knowledge.document.read",
  resource: { type: "tool", id: "test_counter" },
  context: { run_id: "00000000-0000-4000-8000-000000000000", step_no: "3", fingerprint: "f".repeat(64) },
};

/** `unary`: each call a unary Decide (the client's `waitForReady` calls are); else a call on the client's stream. */
async function sample(api: PolicyDecisionApi, n: number, unary = false): Promise<number[]> {
  await api.decide(REQUEST, { deadlineMs: 5000, waitForReady: true }); // the server is up
  const options = { deadlineMs: 5000, waitForReady: unary };
  for (let i = 0; i < 300; i++) await api.decide(REQUEST, options); // warm-up
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await api.decide(REQUEST, options);
    out.push(performance.now() - t0);
  }
  return out;
}

/**
 * gRPC over loopback with Steward's generated PolicyDecision service and client, called as Steward's services
 * call (a call stream, `DecideEach`): one hop, and a chained pair (back to back, and each after an idle pause).
 */
export async function measureGrpcFloor(options: { samples: number; idle: IdlePause }): Promise<GrpcFloor> {
  const script = join(__dirname, "grpc-server.js");
  const leaf = await spawnNode(script, ["leaf"]);
  const relay = await spawnNode(script, ["relay", String(leaf.ready.addr)]).catch(async (err) => {
    await leaf.stop();
    throw err;
  });
  const direct = createPolicyDecisionApi(String(leaf.ready.addr));
  const chained = createPolicyDecisionApi(String(relay.ready.addr));
  try {
    return {
      oneHop: summarize(await sample(direct, options.samples)),
      chained: summarize(await sample(chained, options.samples)),
      chainedAfterIdle: summarize(await afterIdle(options.idle, () => chained.decide(REQUEST, { deadlineMs: 5000 }))),
      unary: { oneHop: summarize(await sample(direct, options.samples, true)), chained: summarize(await sample(chained, options.samples, true)) },
    };
  } finally {
    direct.close();
    chained.close();
    await relay.stop();
    await leaf.stop();
  }
}

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createPolicyDecisionApi } from "@steward/proto";
import { repoRoot } from "../paths";
import { summarize, type Summary } from "../stats";
import type { StewardBench } from "./context";

export interface PolicyResult {
  /** Cedar evaluation of one tool decision in process (pre-parsed default set, entities built per call). */
  readonly inProcess: Summary;
  /** PolicyDecision.Decide over gRPC to the running policy service: facts read, Cedar, decision log written. */
  readonly grpc: Summary;
}

interface Engine {
  validate(text: string): { valid: boolean };
  prepare(key: string, set: unknown): unknown;
  authorize(set: unknown, request: unknown): { permit: boolean };
}

type CreateEngine = (schema: string, options: { rememberedAnswers: number }) => Engine;

function loadPolicyInternals(): { createCedarEngine: CreateEngine; entitiesFor(i: unknown): unknown; resourceUid(t: string, id: string): unknown } {
  // The PDP's engine from its build (packages/pdp, which the policy service and the gateway run): measured as they run it.
  const dist = join(repoRoot, "packages", "pdp", "dist");
  /* eslint-disable @typescript-eslint/no-require-imports */
  return {
    ...(require(join(dist, "adapters", "cedar", "engine.js")) as { createCedarEngine: CreateEngine }),
    ...(require(join(dist, "domain", "entities.js")) as { entitiesFor(i: unknown): unknown; resourceUid(t: string, id: string): unknown }),
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
}

/** Decision latency: in-process Cedar evaluation and the gRPC round trip to the PDP. */
export async function measurePolicy(bench: StewardBench, samples: number): Promise<PolicyResult> {
  const { createCedarEngine, entitiesFor, resourceUid } = loadPolicyInternals();
  const dir = join(repoRoot, "infra", "policies");
  // Nothing remembered: every sample is an evaluation by Cedar.
  const engine = createCedarEngine(readFileSync(join(dir, "schema.cedarschema"), "utf8"), { rememberedAnswers: 0 });
  const prepared = engine.prepare("bench@1", engine.validate(readFileSync(join(dir, "default.cedar"), "utf8")));
  // A new step number each time, as each tool call of a run has.
  const request = (stepNo: number) => ({
    principal: { type: "Steward::User", id: "bench-user" },
    action: "knowledge.document.read",
    resource: resourceUid("tool", "knowledge_search"),
    context: { elevated: false, run_id: "", step_no: stepNo },
    entities: entitiesFor({
      tenantId: "bench",
      userId: "bench-user",
      roles: ["member"],
      resource: { type: "tool", id: "knowledge_search" },
      toolSafety: "read",
    }),
  });
  const local: number[] = [];
  for (let i = 0; i < samples + 50; i++) {
    const t0 = performance.now();
    const answer = engine.authorize(prepared, request(i + 1));
    if (i >= 50) local.push(performance.now() - t0);
    if (!answer.permit) throw new Error("the default set did not permit a member to read the knowledge base");
  }
  const addr = bench.platform.services.policy.ready.addr;
  if (!addr) throw new Error("the policy service did not report its address");
  const pdp = createPolicyDecisionApi(addr);
  try {
    const remote: number[] = [];
    for (let i = 0; i < samples + 50; i++) {
      const t0 = performance.now();
      const d = await pdp.decide({
        principal: { tenantId: "bench", userId: "bench-user", roles: ["member"], rolesFromToken: true },
        action: "knowledge.document.read",
        resource: { type: "tool", id: "knowledge_search" },
        context: { tool_safety: "read" },
      });
      if (i >= 50) remote.push(performance.now() - t0);
      if (!d.permit) throw new Error(`the PDP denied a member (${d.code})`);
    }
    return { inProcess: summarize(local), grpc: summarize(remote) };
  } finally {
    pdp.close();
  }
}

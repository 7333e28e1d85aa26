import { createMetrics, sampleValue } from "@steward/platform";
import type { DecisionHandler, DecisionQuery } from "@steward/pdp";
import { withDecisionMetrics } from "./decision-metrics";

const query: DecisionQuery = {
  tenantId: "tenant-acme",
  userId: "user-alice",
  tokenRoles: null,
  action: "tool.invoke",
  resource: { type: "tool", id: "knowledge_search" },
  context: { run_id: "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0" },
};

describe("decision metrics", () => {
  it("counts permits and denies by code, times them, and never labels the tenant, user or run", async () => {
    const metrics = createMetrics("policy", { defaults: false });
    const answers = [
      { permit: true, code: "", reasons: [], policyIds: ["p1"], policyVersion: 1 },
      { permit: false, code: "60500", reasons: ["no"], policyIds: [], policyVersion: 1 },
      { permit: false, code: "60500", reasons: ["no"], policyIds: [], policyVersion: 1 },
    ];
    const handle = withDecisionMetrics((async () => answers.shift()!) as DecisionHandler, metrics);
    for (let i = 0; i < 3; i++) await handle(query);
    const text = await metrics.text();
    expect(sampleValue(text, "steward_policy_decisions_total", { effect: "permit", code: "none" })).toBe(1);
    expect(sampleValue(text, "steward_policy_decisions_total", { effect: "deny", code: "60500" })).toBe(2);
    expect(sampleValue(text, "steward_policy_decision_duration_seconds_count")).toBe(3);
    expect(sampleValue(text, "steward_policy_decision_duration_seconds_count", { effect: "deny" })).toBe(2);
    for (const secret of ["acme", "alice", "0b1c2d3e"]) expect(text).not.toContain(secret);
  });

  it("times a failed decision as an error and passes the failure on", async () => {
    const metrics = createMetrics("policy", { defaults: false });
    const handle = withDecisionMetrics(
      (async () => {
        throw new Error("PostgreSQL is away");
      }) as DecisionHandler,
      metrics,
    );
    await expect(handle(query)).rejects.toThrow("PostgreSQL is away");
    const text = await metrics.text();
    expect(sampleValue(text, "steward_policy_decision_duration_seconds_count", { effect: "error" })).toBe(1);
    expect(sampleValue(text, "steward_policy_decisions_total")).toBeUndefined();
  });
});

import { decisionOf, unknownActionDecision } from "./decide";

const allow = { permit: true, policyIds: ["member-runs"], errors: [], erroredPolicyIds: [] };
const deny = { permit: false, policyIds: [], errors: [], erroredPolicyIds: [] };

describe("decisionOf", () => {
  it("given Cedar allows, then permit naming the policies", () => {
    expect(decisionOf({ action: "agent.run.read", elevation: { kind: "none" }, verdict: allow })).toMatchObject({
      permit: true,
      code: "",
      policyIds: ["member-runs"],
    });
  });

  it("given Cedar denies, then 60500", () => {
    expect(decisionOf({ action: "dataset.read", elevation: { kind: "none" }, verdict: deny })).toMatchObject({ permit: false, code: "60500" });
  });

  it.each(["expired", "revoked", "unknown", "not_yours"] as const)("given a deny and an elevation that is %s, then 60501", (reason) => {
    const d = decisionOf({ action: "dataset.read", elevation: { kind: "invalid", reason }, verdict: deny });
    expect(d).toMatchObject({ permit: false, code: "60501" });
    expect(d.reasons[0]).toContain(reason);
  });

  it("given an unusable elevation but roles that permit anyway, then permit", () => {
    expect(decisionOf({ action: "agent.run.read", elevation: { kind: "invalid", reason: "revoked" }, verdict: allow }).permit).toBe(true);
  });

  it("given a forbid, then the deny names it", () => {
    const d = decisionOf({ action: "x", elevation: { kind: "none" }, verdict: { permit: false, policyIds: ["no-writes"], errors: [], erroredPolicyIds: [] } });
    expect(d.policyIds).toEqual(["no-writes"]);
    expect(d.reasons[0]).toContain("no-writes");
  });

  it("given Cedar allows but a forbid errored, then 60503 naming the erroring policy and no error text", () => {
    const verdict = {
      permit: true,
      policyIds: ["member-runs"],
      errors: ["no-overflow: integer overflow while attempting to add `9223372036854775807` and `1`"],
      erroredPolicyIds: ["no-overflow"],
    };
    const d = decisionOf({ action: "agent.run.read", elevation: { kind: "none" }, verdict });
    expect(d).toEqual({ permit: false, code: "60503", reasons: ["policy evaluation error in no-overflow"], policyIds: ["no-overflow"] });
  });

  it("given an erroring policy and an unusable elevation, then the evaluation error is the reported one", () => {
    const verdict = { ...deny, erroredPolicyIds: ["broken-permit"] };
    expect(decisionOf({ action: "dataset.read", elevation: { kind: "invalid", reason: "expired" }, verdict })).toMatchObject({ permit: false, code: "60503" });
  });
});

describe("unknownActionDecision", () => {
  it("refuses an action outside the catalogue and lets catalogue actions through to Cedar", () => {
    expect(unknownActionDecision("agent.run.destroy")).toMatchObject({ permit: false, code: "60500" });
    expect(unknownActionDecision("agent.run.read")).toBeNull();
  });
});

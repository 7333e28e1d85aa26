import { decisionOf, unknownActionDecision } from "./decide";

const allow = { permit: true, policyIds: ["member-runs"], errors: [] };
const deny = { permit: false, policyIds: [], errors: [] };

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
    const d = decisionOf({ action: "x", elevation: { kind: "none" }, verdict: { permit: false, policyIds: ["no-writes"], errors: [] } });
    expect(d.policyIds).toEqual(["no-writes"]);
    expect(d.reasons[0]).toContain("no-writes");
  });
});

describe("unknownActionDecision", () => {
  it("refuses an action outside the catalogue and lets catalogue actions through to Cedar", () => {
    expect(unknownActionDecision("agent.run.destroy")).toMatchObject({ permit: false, code: "60500" });
    expect(unknownActionDecision("agent.run.read")).toBeNull();
  });
});

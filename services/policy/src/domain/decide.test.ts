import { decide, ruleId, type RoleRule } from "./decide";

const readerRule: RoleRule = { tenant: "acme", role: "reader", action: "knowledge.document.read" };
const writerRule: RoleRule = { tenant: "acme", role: "writer", action: "knowledge.document.write" };
const adminWildcard: RoleRule = { tenant: "*", role: "admin", action: "*" };
const rules = [readerRule, writerRule, adminWildcard];

describe("decide", () => {
  it("permits through a rule matching one of the principal's roles and names that rule", () => {
    const d = decide({ roles: ["reader"], action: "knowledge.document.read", rules });
    expect(d.permit).toBe(true);
    expect(d.code).toBe("");
    expect(d.policyIds).toEqual(["role_actions/acme/reader/knowledge.document.read"]);
    expect(d.reasons.join(" ")).toContain("reader");
  });

  it("formats a rule id from tenant, role and action", () => {
    expect(ruleId(adminWildcard)).toBe("role_actions/*/admin/*");
  });

  it("permits any catalogued action through a wildcard action rule", () => {
    const d = decide({ roles: ["admin"], action: "policy.admin", rules });
    expect(d.permit).toBe(true);
    expect(d.policyIds).toEqual(["role_actions/*/admin/*"]);
  });

  it("names every matching rule when several grant the action", () => {
    const d = decide({ roles: ["reader", "admin"], action: "knowledge.document.read", rules });
    expect(d.permit).toBe(true);
    expect(d.policyIds).toEqual(expect.arrayContaining([ruleId(readerRule), ruleId(adminWildcard)]));
    expect(d.policyIds).toHaveLength(2);
  });

  it("denies with 60500 when the principal holds no role, even with a wildcard rule", () => {
    const d = decide({ roles: [], action: "agent.run.read", rules });
    expect(d.permit).toBe(false);
    expect(d.code).toBe("60500");
    expect(d.policyIds).toEqual([]);
    expect(d.reasons).toHaveLength(1);
  });

  it("denies an action outside the catalogue even to a wildcard admin", () => {
    const d = decide({ roles: ["admin"], action: "system.shutdown", rules });
    expect(d.permit).toBe(false);
    expect(d.code).toBe("60500");
    expect(d.policyIds).toEqual([]);
    expect(d.reasons[0]).toContain("system.shutdown");
  });

  it("denies when no rule is for one of the principal's roles", () => {
    const d = decide({ roles: ["reader"], action: "knowledge.document.write", rules });
    expect(d.permit).toBe(false);
    expect(d.code).toBe("60500");
    expect(d.policyIds).toEqual([]);
  });

  it("denies when the role matches but the action does not", () => {
    const d = decide({ roles: ["writer"], action: "knowledge.document.read", rules: [writerRule] });
    expect(d.permit).toBe(false);
    expect(d.code).toBe("60500");
  });

  it("denies when there are no rules at all", () => {
    expect(decide({ roles: ["admin"], action: "agent.run.create", rules: [] }).permit).toBe(false);
  });
});

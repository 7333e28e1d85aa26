import { readFileSync } from "node:fs";
import { join } from "node:path";
import { entitiesFor, resourceUid } from "../../domain/entities";
import { createCedarEngine } from "./engine";

const dir = join(__dirname, "..", "..", "..", "..", "..", "infra", "policies");
const engine = createCedarEngine(readFileSync(join(dir, "schema.cedarschema"), "utf8"));
const defaults = readFileSync(join(dir, "default.cedar"), "utf8");

function ask(key: string, roles: string[], action: string, opts: { tool?: string; safety?: string; elevated?: boolean } = {}) {
  const resource = opts.tool ? { type: "tool", id: opts.tool } : { type: "run", id: "" };
  return engine.authorize(key, {
    principal: { type: "Steward::User", id: "u1" },
    action,
    resource: resourceUid(resource.type, resource.id),
    context: { elevated: opts.elevated ?? false, run_id: "", step_no: 0 },
    entities: entitiesFor({ tenantId: "t1", userId: "u1", roles, resource, toolSafety: opts.safety }),
  });
}

describe("the Cedar engine", () => {
  beforeAll(() => {
    const set = engine.validate(defaults);
    expect(set.valid).toBe(true);
    engine.prepare("t1@1", set);
  });

  it("permits by a named policy", () => {
    expect(ask("t1@1", ["member"], "agent.run.create")).toEqual({ permit: true, policyIds: ["member-runs"], errors: [] });
  });

  it("denies what no policy permits", () => {
    expect(ask("t1@1", ["member"], "policy.admin")).toMatchObject({ permit: false, policyIds: [] });
    expect(ask("t1@1", [], "agent.run.read")).toMatchObject({ permit: false });
  });

  it("lets an elevation grant what the roles do not", () => {
    expect(ask("t1@1", ["member"], "knowledge.document.write", { tool: "delete_docs" })).toMatchObject({ permit: false });
    expect(ask("t1@1", ["member"], "knowledge.document.write", { tool: "delete_docs", elevated: true })).toMatchObject({ permit: true, policyIds: ["elevation-grants"] });
    expect(ask("t1@1", ["member"], "knowledge.document.write", { tool: "save_note" })).toMatchObject({ permit: true, policyIds: ["member-save-notes"] });
  });

  it("lets a forbid override a permit, and names the forbid", () => {
    const set = engine.validate(
      `${defaults}\n@id("no-write-tools-for-contractors")\nforbid (principal in Steward::Role::"contractor", action, resource is Steward::Tool) when { resource.safety == "write" };`,
    );
    expect(set.valid).toBe(true);
    engine.prepare("t1@2", set);
    const writeTool = { tool: "save_note", safety: "write" };
    expect(ask("t1@2", ["admin"], "knowledge.document.write", writeTool)).toMatchObject({ permit: true });
    expect(ask("t1@2", ["admin", "contractor"], "knowledge.document.write", writeTool)).toEqual({
      permit: false,
      policyIds: ["no-write-tools-for-contractors"],
      errors: [],
    });
  });

  it("does not evaluate an action outside the schema", () => {
    const answer = ask("t1@1", ["admin"], "rm.rf");
    expect(answer.permit).toBe(false);
    expect(answer.errors.length).toBeGreaterThan(0);
  });

  it("rejects at upload a policy the schema does not allow, naming it", () => {
    const report = engine.validate(`@id("typo")\npermit (principal, action == Steward::Action::"agent.run.destroy", resource);`);
    expect(report.valid).toBe(false);
    expect(report.issues[0]).toMatchObject({ policyId: "typo" });
    expect(report.issues[0].message).toMatch(/agent\.run\.destroy/);
  });

  it("rejects a policy without an @id, a duplicate @id, unparsable text and an empty set", () => {
    expect(engine.validate(`permit (principal, action, resource);`).issues[0].message).toMatch(/@id/);
    const twice = `@id("a")\npermit (principal, action, resource);\n@id("a")\nforbid (principal, action, resource);`;
    expect(engine.validate(twice).issues[0].message).toMatch(/twice/);
    expect(engine.validate("permit (principal,").valid).toBe(false);
    expect(engine.validate("// nothing").valid).toBe(false);
  });
});

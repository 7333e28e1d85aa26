import { metricCatalog, otherLabelValue, type MetricDef } from "./catalog";
import { checkLabelNames, createLabelBounds, maxDistinctValues, MetricDefinitionError } from "./labels";

const def: MetricDef = {
  name: "steward_test_total",
  help: "test",
  kind: "counter",
  labels: { tool: "capped", result: ["ok", "60302"] },
};

describe("label bounds", () => {
  it("keeps a closed label's listed values and counts anything else as other", () => {
    const bound = createLabelBounds(def);
    expect(bound({ tool: "knowledge_search", result: "ok" })).toEqual({ tool: "knowledge_search", result: "ok" });
    expect(bound({ tool: "knowledge_search", result: "no such code" })).toEqual({ tool: "knowledge_search", result: otherLabelValue });
    expect(bound({ tool: "knowledge_search" })).toEqual({ tool: "knowledge_search", result: otherLabelValue });
  });

  it("keeps at most maxDistinctValues of a capped label; later newcomers are other, known ones stay", () => {
    const bound = createLabelBounds(def);
    for (let i = 0; i < maxDistinctValues; i++) expect(bound({ tool: `tool_${i}`, result: "ok" }).tool).toBe(`tool_${i}`);
    expect(bound({ tool: "one_too_many", result: "ok" }).tool).toBe(otherLabelValue);
    expect(bound({ tool: "tool_3", result: "ok" }).tool).toBe("tool_3");
  });

  it("never keeps an id-shaped or overlong value, even under the cap", () => {
    const bound = createLabelBounds(def);
    for (const value of ["0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0", "deadbeefdeadbeefdeadbeef", "x".repeat(65), "eyJhbGciOiJIUzI1NiJ9eyJzdWIiOiJ1MSJ9abc"]) {
      expect(bound({ tool: value, result: "ok" }).tool).toBe(otherLabelValue);
    }
  });

  it("refuses a label the metric does not declare", () => {
    const bound = createLabelBounds(def);
    expect(() => bound({ tool: "a", result: "ok", run: "x" })).toThrow(MetricDefinitionError);
  });

  it("refuses label names that would carry an identity or a secret", () => {
    for (const label of ["tenant_id", "user", "run_id", "prompt", "token", "api_key", "elevation_session"]) {
      expect(() => checkLabelNames({ ...def, labels: { [label]: "capped" } })).toThrow(MetricDefinitionError);
    }
  });

  it("every catalog metric passes the label-name check and is named steward_*", () => {
    const names = new Set<string>();
    for (const m of Object.values(metricCatalog)) {
      expect(() => checkLabelNames(m)).not.toThrow();
      expect(m.name).toMatch(/^steward_[a-z_]+$/);
      if (m.kind === "counter") expect(m.name).toMatch(/_total$/);
      if (m.kind === "histogram") expect(m.name).toMatch(/_seconds$/);
      names.add(m.name);
    }
    expect(names.size).toBe(Object.keys(metricCatalog).length);
  });
});

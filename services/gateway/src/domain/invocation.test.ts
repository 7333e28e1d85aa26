import type { Capability } from "./capability-search";
import { FOCUS_TOOL, invocationOf, invocationResultOf, requiresWorkspace, toolNameOf } from "./invocation";

const capability = (name: string, policyPoint: string): Capability => ({
  id: `tool:${name}`,
  description: "",
  schema_digest: "sha256:0",
  policy_point: policyPoint,
  route: "read",
  requires_confirmation: false,
  domain: policyPoint.split(".")[0],
});

describe("an invocation of a capability", () => {
  it("names the tool of a tool: id, and nothing for another shape", () => {
    expect(toolNameOf("tool:save_note")).toBe("save_note");
    for (const bad of ["tool:", "save_note", "mcp:x", ""]) expect(toolNameOf(bad)).toBeNull();
  });

  it("is one call with the arguments as canonical JSON, whatever their key order", () => {
    const a = invocationOf(capability("knowledge_search", "knowledge.document.read"), { query: "x", limit: 2 }, null);
    const b = invocationOf(capability("knowledge_search", "knowledge.document.read"), { limit: 2, query: "x" }, "sales");
    expect(a).toEqual({
      capability_id: "tool:knowledge_search",
      calls: [{ call_id: "invoke-1", tool_name: "knowledge_search", arguments: '{"limit":2,"query":"x"}' }],
    });
    expect(b).toEqual(a);
  });

  it("focuses the selected workspace before a dataset-bound capability, and refuses one without a selection", () => {
    const runQuery = capability("run_query", "dataset.read");
    expect(requiresWorkspace(runQuery)).toBe(true);
    expect(invocationOf(runQuery, { sql: "select 1" }, "sales").calls).toEqual([
      { call_id: "invoke-1", tool_name: FOCUS_TOOL, arguments: '{"dataset":"sales"}' },
      { call_id: "invoke-2", tool_name: "run_query", arguments: '{"sql":"select 1"}' },
    ]);
    expect(() => invocationOf(runQuery, {}, null)).toThrow(RangeError);
  });

  it("reads back the runner's answer of an invocation run, and nothing from any other answer", () => {
    expect(invocationResultOf('{"capability_id":"tool:x","result":{"a":1},"result_code":"ok"}')).toEqual({
      capability_id: "tool:x",
      result_code: "ok",
      result: { a: 1 },
    });
    for (const other of [null, "", "plain text", "[]", '{"result_code":"ok"}', "null"]) expect(invocationResultOf(other)).toBeNull();
  });
});

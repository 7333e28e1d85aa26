import { contextAsRead, contextReads } from "./context-reads";

const reads = (...policies: string[]) => {
  const found = contextReads(policies);
  return found === "whole" ? found : [...found].sort();
};

describe("the context attributes a policy set reads", () => {
  it("given attribute access, indexing and `has`, then each attribute named is read", () => {
    expect(reads("permit (principal, action, resource) when { context.elevated };")).toEqual(["elevated"]);
    expect(reads('permit (principal, action, resource) when { context has mcp_mode && context["mcp_mode"] == "observe" };')).toEqual(["mcp_mode"]);
    expect(reads('forbid (principal, action, resource) when { context has "step_no" && context . step_no > 5 };')).toEqual(["step_no"]);
    expect(reads("permit (principal, action, resource);", 'forbid (principal, action, resource) when { context.run_id == "" };')).toEqual(["run_id"]);
  });

  it("given no `context`, or the word only in a string or a comment, then nothing is read", () => {
    expect(reads('permit (principal in Steward::Role::"member", action, resource);')).toEqual([]);
    expect(reads('@id("context")\npermit (principal, action, resource) when { resource.id == "context.step_no" }; // context == {}')).toEqual([]);
  });

  it("given the whole context used (compared, passed on, a method, an escaped name, the text's last word), then everything counts", () => {
    expect(reads('forbid (principal, action, resource) when { context == {"elevated": true} };')).toBe("whole");
    expect(reads("forbid (principal, action, resource) when { context.elevated.contains(1) };")).toEqual(["elevated"]);
    expect(reads("forbid (principal, action, resource) when { context.isEmpty() };")).toBe("whole");
    expect(reads('forbid (principal, action, resource) when { context["step\\u{5f}no"] > 5 };')).toBe("whole");
    expect(reads("permit (principal, action, resource) when { context.elevated };", "context")).toBe("whole");
  });

  it("given another `context` (an attribute of a resource, a record's key), then it errs towards reading more", () => {
    expect(reads("permit (principal, action, resource) when { resource.context.x };")).toEqual(["x"]);
    expect(reads("permit (principal, action, resource) when { {context: 1}.context == 1 };")).toBe("whole");
  });
});

describe("a context as an answer depends on it", () => {
  const context = { elevated: false, run_id: "r1", step_no: 3 };

  it("keeps the values read and only the kind of the others", () => {
    expect(contextAsRead(context, new Set(["elevated"]))).toEqual({ values: { elevated: false }, kinds: { run_id: "string", step_no: "integer" } });
    expect(contextAsRead({ ...context, step_no: 4, run_id: "r2" }, new Set(["elevated"]))).toEqual(contextAsRead(context, new Set(["elevated"])));
    expect(contextAsRead(context, "whole")).toBe(context);
  });

  it("tells kinds apart, and keeps a value Cedar might take otherwise than its kind's others (a fraction)", () => {
    const read = new Set<string>();
    expect(contextAsRead({ step_no: "3" }, read)).not.toEqual(contextAsRead({ step_no: 3 }, read));
    expect(contextAsRead({ step_no: 1.5 }, read)).toEqual({ values: { step_no: 1.5 }, kinds: {} });
    expect(contextAsRead({ step_no: 2 ** 60 }, read)).not.toEqual(contextAsRead({ step_no: 2 ** 61 }, read));
    expect(contextAsRead({}, read)).not.toEqual(contextAsRead({ step_no: 1 }, read));
  });
});

import { MCP_CATALOGUE, mayWrite, parseMcpMode } from "./mcp-mode";

describe("the MCP session mode", () => {
  it("is Observe without the header, and the named mode otherwise (case and white space aside)", () => {
    expect(parseMcpMode(undefined)).toBe("observe");
    expect(parseMcpMode("execute")).toBe("execute");
    expect(parseMcpMode(" Admin ")).toBe("admin");
    expect(parseMcpMode("OBSERVE")).toBe("observe");
  });

  it("is no mode for any other value, an empty one, or the header sent twice", () => {
    for (const bad of ["", "root", "execute,admin", "observe\u0000", "adm in"]) expect(parseMcpMode(bad)).toBeNull();
    expect(parseMcpMode(["observe", "admin"])).toBeNull();
  });

  it("lists a fixed catalogue per mode: Observe has no control of a run, Execute and Admin answer and approve", () => {
    expect(MCP_CATALOGUE.observe).not.toEqual(expect.arrayContaining(["answer_question"]));
    expect(MCP_CATALOGUE.observe).not.toContain("approve_call");
    expect(MCP_CATALOGUE.observe).toEqual(expect.arrayContaining(["run_question", "get_run", "search_capabilities", "invoke_capability", "select_workspace"]));
    expect(MCP_CATALOGUE.execute).toEqual(expect.arrayContaining([...MCP_CATALOGUE.observe, "answer_question", "approve_call"]));
    expect(mayWrite("observe")).toBe(false);
    expect(mayWrite("execute")).toBe(true);
  });

  it("gives Admin the Execute catalogue and the administrators' capabilities, nobody else", () => {
    expect(MCP_CATALOGUE.admin).toEqual([...MCP_CATALOGUE.execute, "list_tenant_runs"]);
    expect(MCP_CATALOGUE.execute).not.toContain("list_tenant_runs");
  });

  it("is the core tools plus search and invoke: compact, the long tail reached through search_capabilities", () => {
    for (const mode of ["observe", "execute", "admin"] as const) {
      expect(MCP_CATALOGUE[mode]).toEqual(expect.arrayContaining(["knowledge_search", "explore_dataset", "search_capabilities", "invoke_capability"]));
      expect(MCP_CATALOGUE[mode].length).toBeLessThanOrEqual(12);
      expect(new Set(MCP_CATALOGUE[mode]).size).toBe(MCP_CATALOGUE[mode].length);
    }
  });
});

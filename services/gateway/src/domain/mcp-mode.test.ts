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
    expect(MCP_CATALOGUE.observe).toEqual(["run_question", "get_run", "search_capabilities"]);
    expect(MCP_CATALOGUE.execute).toEqual(expect.arrayContaining(["answer_question", "approve_call"]));
    expect(MCP_CATALOGUE.admin).toEqual(MCP_CATALOGUE.execute);
    expect(mayWrite("observe")).toBe(false);
    expect(mayWrite("execute")).toBe(true);
  });
});

import { capabilityOf, schemaDigest, searchCapabilities, termsOf, type ToolDescription } from "./capability-search";

const tool = (name: string, description: string, policyPoint: string, safety = "read", requireConfirmation = false): ToolDescription => ({
  name,
  description,
  inputSchemaJson: JSON.stringify({ type: "object", properties: { q: { type: "string" } } }),
  safety,
  policyPoint,
  requireConfirmation,
});

const catalogue = [
  tool("knowledge_search", "Searches the tenant's knowledge base for documents.", "knowledge.document.read"),
  tool("save_note", "Saves a note to the knowledge base.", "knowledge.document.write", "write", true),
  tool("list_tables", "Lists the tables of the focused dataset.", "dataset.read"),
  tool("run_query", "Runs one read-only SQL statement on the focused dataset.", "dataset.read"),
  tool("mcp_files_echo", "Echoes the text back (MCP server files)", "mcp.files.echo", "write"),
].map(capabilityOf);

describe("capabilities from the tool catalogue", () => {
  it("carry a stable id, the policy point, the read/write route and the domain", () => {
    expect(catalogue[1]).toMatchObject({
      id: "tool:save_note",
      policy_point: "knowledge.document.write",
      route: "write",
      requires_confirmation: true,
      domain: "knowledge",
      schema_digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
    expect(catalogue[0].route).toBe("read");
    expect(catalogue[4].domain).toBe("mcp");
  });

  it("digest the input schema canonically: key order and white space do not change it, content does", () => {
    const a = schemaDigest('{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"number"}}}');
    const b = schemaDigest('{ "properties": { "b": {"type":"number"}, "a": {"type":"string"} }, "type": "object" }');
    expect(a).toBe(b);
    expect(schemaDigest('{"type":"object"}')).not.toBe(a);
    expect(schemaDigest("not json")).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});

describe("searching capabilities", () => {
  it("folds case, plurals, stop words and synonyms", () => {
    expect(termsOf("Find the Documents")).toEqual(["search", "document"]);
    expect(termsOf("store notes")).toEqual(["save", "note"]);
  });

  it("ranks by the name first, then the policy point, then the description", () => {
    expect(searchCapabilities(catalogue, { query: "search the knowledge base" }).map((c) => c.id)[0]).toBe("tool:knowledge_search");
    expect(searchCapabilities(catalogue, { query: "save a note" }).map((c) => c.id)[0]).toBe("tool:save_note");
    expect(searchCapabilities(catalogue, { query: "list tables" }).map((c) => c.id)[0]).toBe("tool:list_tables");
  });

  it("filters by domain and leaves out what matches no word", () => {
    expect(searchCapabilities(catalogue, { query: "knowledge documents", domain: "dataset" })).toEqual([]);
    expect(searchCapabilities(catalogue, { query: "dataset", domain: "dataset" }).map((c) => c.id)).toEqual(["tool:list_tables", "tool:run_query"]);
    expect(searchCapabilities(catalogue, { query: "fly a kite" })).toEqual([]);
  });

  it("answers at most the limit, ties in id order, the same for the same query", () => {
    const first = searchCapabilities(catalogue, { query: "knowledge dataset" }, 2);
    expect(first).toHaveLength(2);
    expect(searchCapabilities(catalogue, { query: "knowledge dataset" }, 2)).toEqual(first);
  });
});

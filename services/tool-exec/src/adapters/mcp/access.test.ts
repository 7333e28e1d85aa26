import { accessOf, describeHints, unknownConfiguredTools } from "./access";
import { parseMcpServers, type McpServerConfig } from "./config";

const server = (more: Partial<McpServerConfig> = {}): McpServerConfig =>
  ({ name: "files", transport: "http", url: "http://127.0.0.1:9/mcp", ...more }) as McpServerConfig;

describe("MCP tool access: Steward's configuration, never the server's hints", () => {
  it("defaults to write with confirmation, not idempotent", () => {
    expect(accessOf(server(), "read_file")).toEqual({ safety: "write", requireConfirmation: true, idempotent: false });
  });

  it("a server declared read-only gives its tools read without confirmation", () => {
    expect(accessOf(server({ safety: "read" }), "read_file")).toEqual({ safety: "read", requireConfirmation: false, idempotent: false });
  });

  it("a tool's entry overrides the server's, field by field", () => {
    const config = server({
      safety: "read",
      idempotent: true,
      tools: { delete_file: { safety: "write" }, stat: { require_confirmation: true }, touch: { safety: "write", require_confirmation: false } },
    });
    expect(accessOf(config, "read_file")).toEqual({ safety: "read", requireConfirmation: false, idempotent: true });
    expect(accessOf(config, "delete_file")).toEqual({ safety: "write", requireConfirmation: true, idempotent: true });
    expect(accessOf(config, "stat")).toEqual({ safety: "read", requireConfirmation: true, idempotent: true });
    expect(accessOf(config, "touch")).toEqual({ safety: "write", requireConfirmation: false, idempotent: true });
  });

  it("a server-wide confirmation setting applies to writes and reads alike", () => {
    expect(accessOf(server({ require_confirmation: false }), "x")).toEqual({ safety: "write", requireConfirmation: false, idempotent: false });
    expect(accessOf(server({ safety: "read", require_confirmation: true }), "x")).toMatchObject({ safety: "read", requireConfirmation: true });
  });

  it("a tool named like an object's own property gets the defaults, not the prototype's", () => {
    expect(accessOf(server({ tools: {} }), "constructor")).toEqual({ safety: "write", requireConfirmation: true, idempotent: false });
    expect(accessOf(server({ tools: {} }), "__proto__")).toEqual({ safety: "write", requireConfirmation: true, idempotent: false });
  });

  it("puts the server's hints into words for the administrator", () => {
    expect(describeHints({ readOnlyHint: true, idempotentHint: true })).toBe("read-only, idempotent");
    expect(describeHints({ readOnlyHint: false, destructiveHint: false, openWorldHint: true })).toBe("not read-only, not destructive, open world");
    expect(describeHints(undefined)).toBe("");
    expect(describeHints({})).toBe("");
  });

  it("names configured tools the server does not offer", () => {
    expect(unknownConfiguredTools(server({ tools: { echo: {}, ecko: {} } }), ["echo", "wipe"])).toEqual(["ecko"]);
  });
});

describe("MCP_SERVERS access fields", () => {
  const base = { name: "files", transport: "stdio", command: "node" };

  it("accepts safety, require_confirmation, idempotent and per-tool entries on either transport", () => {
    const raw = JSON.stringify([
      { ...base, safety: "read", require_confirmation: false, tools: { wipe: { safety: "write", require_confirmation: true, idempotent: false } } },
      { name: "web", transport: "http", url: "http://127.0.0.1:9000/mcp", idempotent: true },
    ]);
    const [files, web] = parseMcpServers(raw);
    expect(accessOf(files, "wipe")).toEqual({ safety: "write", requireConfirmation: true, idempotent: false });
    expect(accessOf(web, "fetch")).toEqual({ safety: "write", requireConfirmation: true, idempotent: true });
  });

  it.each([
    ["an unknown safety", { ...base, safety: "admin" }, /safety/],
    ["a non-boolean confirmation", { ...base, require_confirmation: "no" }, /require_confirmation/],
    ["an unknown key in a tool's entry", { ...base, tools: { echo: { readOnlyHint: true } } }, /tools/],
    ["a bad tool entry", { ...base, tools: { echo: "read" } }, /tools/],
    ["an empty tool name", { ...base, tools: { "": { safety: "read" } } }, /tools/],
    ["a tool name over 128 characters", { ...base, tools: { ["x".repeat(129)]: { safety: "read" } } }, /tools/],
    ["an unknown transport", { ...base, transport: "ws" }, /transport: must be "stdio" or "http"/],
  ])("refuses %s, naming the variable", (_what, server, path) => {
    expect(() => parseMcpServers(JSON.stringify([server]))).toThrow(/MCP_SERVERS/);
    expect(() => parseMcpServers(JSON.stringify([server]))).toThrow(path);
  });
});

import { join } from "node:path";
import { createLogger } from "@steward/platform";
import type { McpServerConfig } from "./config";
import { mountMcpServers, mountedDescription, type MountedMcp } from "./mount";

// The suite's MCP server, over stdio: its `echo` hints read-only and idempotent, its `wipe` not destructive.
const serverScript = join(__dirname, "..", "..", "..", "..", "..", "test", "support", "mcp-test-server.cjs");
const local = (more: Partial<McpServerConfig> = {}): McpServerConfig =>
  ({ name: "local", transport: "stdio", command: process.execPath, args: [serverScript], env: { PATH: process.env.PATH ?? "" }, ...more }) as McpServerConfig;

describe("mounting an MCP server: flags from Steward's configuration, the server's hints only shown", () => {
  const logger = createLogger("tool-exec", "silent");
  const mounted: MountedMcp[] = [];
  async function mount(config: McpServerConfig) {
    const m = await mountMcpServers([config], logger);
    mounted.push(m);
    return new Map(m.tools.map((t) => [t.name, t]));
  }

  afterAll(async () => {
    await Promise.all(mounted.map((m) => m.close()));
  });

  it("without configuration, a tool hinting read-only is still write, needs confirmation and is not idempotent", async () => {
    const tools = await mount(local());
    for (const name of ["mcp_local_echo", "mcp_local_wipe"]) {
      expect(tools.get(name)).toMatchObject({ safety: "write", requireConfirmation: true, idempotent: false, policyPoint: `mcp.local.${name.slice(10)}` });
    }
    expect(tools.get("mcp_local_echo")!.description).toBe("Echoes the text back. (MCP server local; server's hints, not applied: read-only, idempotent)");
    expect(tools.get("mcp_local_wipe")!.description).toMatch(/server's hints, not applied: not read-only, not destructive\)$/);
  });

  it("the configuration declares a tool read-only without confirmation; the server's other tools keep the default", async () => {
    const tools = await mount(local({ tools: { echo: { safety: "read", idempotent: true } } }));
    expect(tools.get("mcp_local_echo")).toMatchObject({ safety: "read", requireConfirmation: false, idempotent: true });
    expect(tools.get("mcp_local_wipe")).toMatchObject({ safety: "write", requireConfirmation: true, idempotent: false });
    const ctx = { tenantId: "acme", userId: "u", runId: "r", stepNo: 1, signal: AbortSignal.timeout(10_000), remainingMs: 10_000 };
    expect(await tools.get("mcp_local_echo")!.run(ctx, { text: "hi" })).toEqual({ result: { content: ["stdio says hi"] } });
  });

  it("a server declared read-only gives every tool read, and one tool can be set back to write", async () => {
    const tools = await mount(local({ safety: "read", tools: { wipe: { safety: "write" } } }));
    expect(tools.get("mcp_local_echo")).toMatchObject({ safety: "read", requireConfirmation: false });
    expect(tools.get("mcp_local_wipe")).toMatchObject({ safety: "write", requireConfirmation: true });
  });

  it("keeps the description within 1000 characters with the server and hints at the end", () => {
    const text = mountedDescription("local", "x".repeat(5000), "read-only");
    expect(text).toHaveLength(1000);
    expect(text.endsWith("(MCP server local; server's hints, not applied: read-only)")).toBe(true);
    expect(mountedDescription("local", "Lists files.", "")).toBe("Lists files. (MCP server local)");
  });
});

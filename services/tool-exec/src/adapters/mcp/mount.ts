import { Type } from "@sinclair/typebox";
import CircuitBreaker from "opossum";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { McpPolicyPoint } from "@steward/contract";
import type { Logger } from "@steward/platform";
import type { AnyToolDefinition, ToolOutcome } from "../../domain/tool";
import { accessOf, describeHints, unknownConfiguredTools } from "./access";
import type { McpServerConfig } from "./config";

export interface MountedMcp {
  readonly tools: AnyToolDefinition[];
  close(): Promise<void>;
}

/** The model-facing name of a mounted tool: `mcp_<server>_<tool>`, within the registry's name rules. */
export function mountedName(server: string, tool: string): string {
  return `mcp_${server}_${tool}`
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, "_")
    .slice(0, 64);
}

function textOf(content: unknown): string[] {
  if (!Array.isArray(content)) return [];
  return content
    .filter((c): c is { type: "text"; text: string } => !!c && typeof c === "object" && (c as { type?: string }).type === "text")
    .map((c) => c.text.slice(0, 20_000));
}

/** A mounted tool's description: the server's text, then the server and its hints, marked as hints only. */
export function mountedDescription(server: string, description: string, hints: string): string {
  const suffix = hints ? ` (MCP server ${server}; server's hints, not applied: ${hints})` : ` (MCP server ${server})`;
  return `${description.slice(0, 1000 - suffix.length)}${suffix}`;
}

/**
 * Connects to each configured MCP server and turns its tools into registry tools: policy point
 * `mcp.<server>.<tool>` (so every call goes through the PDP and the decision log like any other), safety,
 * confirmation and idempotency from Steward's configuration (`accessOf`; the server's annotations are only
 * shown, in the description and the mount log), a timeout that never outlasts the run's deadline, and one
 * opossum breaker per server. A tool that answers isError is a tool failure (the model gets the controlled result).
 */
export async function mountMcpServers(configs: readonly McpServerConfig[], logger: Logger): Promise<MountedMcp> {
  const clients: Client[] = [];
  const tools: AnyToolDefinition[] = [];
  for (const config of configs) {
    const client = new Client({ name: "steward-tool-exec", version: "0.1.0" });
    const transport =
      config.transport === "stdio"
        ? new StdioClientTransport({ command: config.command, args: config.args, env: config.env, stderr: "ignore" })
        : new StreamableHTTPClientTransport(new URL(config.url));
    await client.connect(transport);
    clients.push(client);
    const timeoutMs = config.timeout_ms ?? 30_000;
    const breaker = new CircuitBreaker(
      (name: string, args: Record<string, unknown>, budgetMs: number, signal: AbortSignal) =>
        client.callTool({ name, arguments: args }, undefined, { timeout: budgetMs, signal }),
      { timeout: false, errorThresholdPercentage: 50, volumeThreshold: 5, resetTimeout: 30_000 },
    );
    const { tools: listed } = await client.listTools();
    const mounted: Array<Record<string, unknown>> = [];
    for (const t of listed) {
      const point = `mcp.${config.name}.${t.name}` as McpPolicyPoint;
      const access = accessOf(config, t.name);
      const hints = describeHints(t.annotations);
      mounted.push({
        tool: t.name,
        safety: access.safety,
        require_confirmation: access.requireConfirmation,
        idempotent: access.idempotent,
        server_hints: hints,
      });
      tools.push({
        name: mountedName(config.name, t.name),
        description: mountedDescription(config.name, t.description ?? t.name, hints),
        input: Type.Unsafe<Record<string, unknown>>(t.inputSchema as object),
        validate: (input) => (input && typeof input === "object" && !Array.isArray(input) ? null : "arguments must be an object"),
        normalise: (input: Record<string, unknown>) => input,
        safety: access.safety,
        policyPoint: point,
        idempotent: access.idempotent,
        abortOnDeny: false,
        requireConfirmation: access.requireConfirmation,
        exploration: false,
        async run(ctx, input: Record<string, unknown>): Promise<ToolOutcome> {
          const budget = Math.max(100, Math.min(timeoutMs, ctx.remainingMs));
          const result = (await breaker.fire(t.name, input, budget, ctx.signal)) as { isError?: boolean; content?: unknown; structuredContent?: unknown };
          if (result.isError) throw new Error(`MCP tool ${point} reported an error`);
          return { result: { content: textOf(result.content), ...(result.structuredContent ? { structured: result.structuredContent } : {}) } };
        },
      });
    }
    const unknown = unknownConfiguredTools(
      config,
      listed.map((t) => t.name),
    );
    if (unknown.length > 0) logger.warn({ server: config.name, tools: unknown }, "MCP_SERVERS configures tools the server does not offer");
    logger.info({ server: config.name, transport: config.transport, tools: mounted }, "MCP server mounted");
  }
  return {
    tools,
    async close() {
      await Promise.allSettled(clients.map((c) => c.close()));
    },
  };
}

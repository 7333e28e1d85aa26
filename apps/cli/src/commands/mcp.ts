import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Command } from "../args";
import type { Context } from "../context";
import { ExitCode } from "../exit-codes";

type McpCommand = Extract<Command, { name: "mcp" }>;

/** JSON-RPC's "server error" range: what a local client gets for a request the gateway could not be asked. */
const GATEWAY_UNAVAILABLE = -32000;

const isRequest = (m: JSONRPCMessage): m is JSONRPCMessage & { id: string | number; method: string } => "method" in m && "id" in m;

/** Why a message could not be forwarded, for stderr and the local client: the gateway's status, never the token. */
function why(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  const message = err instanceof Error ? err.message : String(err);
  return typeof code === "number" && code >= 400 ? `the gateway answered ${code}` : message.replace(/Bearer\s+\S+/gi, "Bearer …");
}

/**
 * `steward mcp [--mode observe|execute|admin]`: Steward's MCP endpoint (`/mcp` on the gateway, docs/mcp.md) for a
 * local client that speaks stdio. Every message from stdin goes to the gateway over streamable HTTP with the CLI's
 * URL and token, every message from the gateway goes to stdout; nothing else is written to stdout. It ends when
 * the client closes stdin (0) or the gateway ends the session.
 */
export async function mcpCommand(ctx: Context, cmd: McpCommand, stdin: NodeJS.ReadableStream, stdout: NodeJS.WritableStream): Promise<number> {
  const token = await ctx.token();
  const upstream = new StreamableHTTPClientTransport(new URL("/mcp", ctx.settings.url), {
    requestInit: { headers: { authorization: `Bearer ${token}`, "steward-mcp-mode": cmd.mode } },
  });
  const local = new StdioServerTransport(stdin as NodeJS.ReadStream, stdout as NodeJS.WriteStream);
  return new Promise<number>((resolve) => {
    let ended = false;
    const end = (code: number) => {
      if (ended) return;
      ended = true;
      void upstream.close().catch(() => undefined);
      void local.close().catch(() => undefined);
      resolve(code);
    };
    local.onmessage = (message) => {
      upstream.send(message).catch((err: unknown) => {
        ctx.stderr.write(`steward mcp: ${why(err)}\n`);
        // A request must be answered, or the client waits for ever; a notification has no answer.
        if (isRequest(message)) void local.send({ jsonrpc: "2.0", id: message.id, error: { code: GATEWAY_UNAVAILABLE, message: `Steward: ${why(err)}` } });
      });
    };
    upstream.onmessage = (message) => void local.send(message);
    upstream.onerror = (err) => ctx.stderr.write(`steward mcp: ${why(err)}\n`);
    local.onerror = (err) => ctx.stderr.write(`steward mcp: ${why(err)}\n`);
    upstream.onclose = () => end(ExitCode.ok);
    stdin.on("end", () => end(ExitCode.ok));
    void upstream.start().then(() => local.start());
    ctx.stderr.write(`steward mcp: ${cmd.mode} mode, ${ctx.settings.url}/mcp\n`);
  });
}

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";

/**
 * MCP clients of a gateway's `/mcp` for one suite: SDK clients over streamable HTTP with a bearer token, and raw
 * requests on a session (to compare answers byte for byte). `closeAll()` in the suite's afterAll.
 */
export function useMcpClients(gatewayUrl: () => string) {
  const clients: Client[] = [];
  const url = () => new URL(`${gatewayUrl()}/mcp`);
  return {
    /**
     * A client in a mode (none: the header is not sent), connected. `capabilities` to offer (elicitation, say), and
     * `before` to set its request handlers before it connects.
     */
    async connect(token: string | undefined, mode?: string, options: { capabilities?: ClientCapabilities; before?: (client: Client) => void } = {}) {
      const headers: Record<string, string> = {};
      if (token) headers.authorization = `Bearer ${token}`;
      if (mode !== undefined) headers["steward-mcp-mode"] = mode;
      const transport = new StreamableHTTPClientTransport(url(), { requestInit: { headers } });
      const client = new Client({ name: "steward-e2e", version: "1.0.0" }, options.capabilities ? { capabilities: options.capabilities } : undefined);
      options.before?.(client);
      await client.connect(transport);
      clients.push(client);
      return { client, transport, sessionId: transport.sessionId! };
    },
    /** One raw request on a session; a string body is sent as it is. */
    async raw(token: string, sessionId: string, body: unknown) {
      const res = await fetch(url(), {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-session-id": sessionId,
          "mcp-protocol-version": "2025-06-18",
        },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
      return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
    },
    async closeAll() {
      for (const c of clients) await c.close().catch(() => undefined);
    },
  };
}

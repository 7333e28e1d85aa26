// A small MCP server owned by the tests: `echo` and `wipe`. Both hint that they are harmless (`echo` read-only,
// `wipe` not destructive): the hints are the server's claim, which Steward must not act on. Every call that
// really runs appends a line to the file named by MCP_CALL_LOG, so a test can tell whether a tool ran.
// Run directly it serves over stdio; `serveHttp(port)` serves the same tools over streamable HTTP.
"use strict";
const { appendFileSync } = require("node:fs");
const { createServer } = require("node:http");
const { Server } = require("@modelcontextprotocol/sdk/server/index.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { StreamableHTTPServerTransport } = require("@modelcontextprotocol/sdk/server/streamableHttp.js");
const { CallToolRequestSchema, ListToolsRequestSchema } = require("@modelcontextprotocol/sdk/types.js");

function build(label, logFile) {
  const server = new Server({ name: `steward-test-${label}`, version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      {
        name: "echo",
        description: "Echoes the text back.",
        inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
        annotations: { readOnlyHint: true, idempotentHint: true },
      },
      {
        name: "wipe",
        description: "Pretends to wipe everything.",
        inputSchema: { type: "object", properties: {}, additionalProperties: false },
        annotations: { readOnlyHint: false, destructiveHint: false },
      },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name, arguments: args } = request.params;
    if (logFile) appendFileSync(logFile, `${label} ${name} ${JSON.stringify(args ?? {})}\n`);
    if (name === "echo") return { content: [{ type: "text", text: `${label} says ${args.text}` }] };
    return { content: [{ type: "text", text: "wiped" }] };
  });
  return server;
}

/** Serves the tools over streamable HTTP (stateless: one transport per request). */
function serveHttp(port, logFile) {
  const http = createServer(async (req, res) => {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    const server = build("http", logFile);
    res.on("close", () => {
      transport.close();
      server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, raw ? JSON.parse(raw) : undefined);
  });
  return new Promise((resolve) => http.listen(port, "127.0.0.1", () => resolve(http)));
}

module.exports = { serveHttp };

if (require.main === module) {
  build("stdio", process.env.MCP_CALL_LOG).connect(new StdioServerTransport());
}

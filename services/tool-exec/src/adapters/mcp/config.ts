import { Type, type Static } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { ConfigError } from "@steward/platform";

const ServerName = Type.String({ pattern: "^[a-z0-9_-]{1,32}$" });

/**
 * How Steward treats an MCP tool: set by the operator, never by the server. Defaults: `write` (hidden in ask
 * mode), confirmation required for a write (not for a read), not idempotent. The server's own
 * `readOnlyHint`/`destructiveHint`/`idempotentHint` are shown as a suggestion only.
 */
const accessFields = {
  safety: Type.Optional(Type.Union([Type.Literal("read"), Type.Literal("write")])),
  require_confirmation: Type.Optional(Type.Boolean()),
  idempotent: Type.Optional(Type.Boolean()),
};
export const McpToolAccessConfig = Type.Object(accessFields, { additionalProperties: false });
export type McpToolAccessConfig = Static<typeof McpToolAccessConfig>;

/** The server-wide access (the default of its tools) and per-tool overrides, keyed by the server's tool name. */
const serverAccessFields = {
  ...accessFields,
  tools: Type.Optional(Type.Record(Type.String({ pattern: "^.{1,128}$" }), McpToolAccessConfig, { additionalProperties: false })),
};

const StdioServer = Type.Object(
  {
    name: ServerName,
    transport: Type.Literal("stdio"),
    command: Type.String({ minLength: 1 }),
    args: Type.Optional(Type.Array(Type.String())),
    env: Type.Optional(Type.Record(Type.String(), Type.String())),
    timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 120_000 })),
    ...serverAccessFields,
  },
  { additionalProperties: false },
);
const HttpServer = Type.Object(
  {
    name: ServerName,
    transport: Type.Literal("http"),
    url: Type.String({ pattern: "^https?://" }),
    timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 120_000 })),
    ...serverAccessFields,
  },
  { additionalProperties: false },
);

/** One MCP server tool-exec mounts: a command it starts (stdio) or an endpoint it calls (streamable HTTP). */
export const McpServerConfig = Type.Union([StdioServer, HttpServer]);
export type McpServerConfig = Static<typeof McpServerConfig>;

// One check per transport, chosen by `transport`, so that an error names the field, not just "the union".
const checks = { stdio: TypeCompiler.Compile(StdioServer), http: TypeCompiler.Compile(HttpServer) };

function problemOf(server: unknown, at: number): string | null {
  const transport = (server as { transport?: unknown } | null)?.transport;
  if (transport !== "stdio" && transport !== "http") return `/${at}/transport: must be "stdio" or "http"`;
  const check = checks[transport];
  if (check.Check(server)) return null;
  const first = check.Errors(server).First();
  return first ? `/${at}${first.path}: ${first.message}` : `/${at}: invalid`;
}

/** Parses `MCP_SERVERS` (a JSON array); a bad value stops the service naming the variable. */
export function parseMcpServers(raw: string | undefined): McpServerConfig[] {
  if (!raw) return [];
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new ConfigError("MCP_SERVERS", "is not JSON");
  }
  if (!Array.isArray(value) || value.length > 32) throw new ConfigError("MCP_SERVERS", "is not a list of at most 32 MCP servers");
  const problem = value.map(problemOf).find((p) => p !== null);
  if (problem) throw new ConfigError("MCP_SERVERS", `is not a list of MCP servers (${problem})`);
  const names = value.map((s) => s.name);
  if (new Set(names).size !== names.length) throw new ConfigError("MCP_SERVERS", "names a server twice");
  return value as McpServerConfig[];
}

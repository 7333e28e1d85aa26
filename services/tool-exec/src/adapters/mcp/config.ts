import { Type, type Static } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { ConfigError } from "@steward/platform";

const ServerName = Type.String({ pattern: "^[a-z0-9_-]{1,32}$" });

/** One MCP server tool-exec mounts: a command it starts (stdio) or an endpoint it calls (streamable HTTP). */
export const McpServerConfig = Type.Union([
  Type.Object(
    {
      name: ServerName,
      transport: Type.Literal("stdio"),
      command: Type.String({ minLength: 1 }),
      args: Type.Optional(Type.Array(Type.String())),
      env: Type.Optional(Type.Record(Type.String(), Type.String())),
      timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 120_000 })),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      name: ServerName,
      transport: Type.Literal("http"),
      url: Type.String({ pattern: "^https?://" }),
      timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 120_000 })),
    },
    { additionalProperties: false },
  ),
]);
export type McpServerConfig = Static<typeof McpServerConfig>;

const check = TypeCompiler.Compile(Type.Array(McpServerConfig, { maxItems: 32 }));

/** Parses `MCP_SERVERS` (a JSON array); a bad value stops the service naming the variable. */
export function parseMcpServers(raw: string | undefined): McpServerConfig[] {
  if (!raw) return [];
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new ConfigError("MCP_SERVERS", "is not JSON");
  }
  if (!check.Check(value)) {
    const first = check.Errors(value).First();
    throw new ConfigError("MCP_SERVERS", `is not a list of MCP servers${first ? ` (${first.path}: ${first.message})` : ""}`);
  }
  const names = value.map((s) => s.name);
  if (new Set(names).size !== names.length) throw new ConfigError("MCP_SERVERS", "names a server twice");
  return value;
}

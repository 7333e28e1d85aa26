import { isPolicyPoint } from "@steward/contract";
import type { AnyToolDefinition as ToolDefinition } from "./tool";

export class ToolRegistryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ToolRegistryError";
  }
}

export interface ToolRegistry {
  get(name: string): ToolDefinition | undefined;
  list(): readonly ToolDefinition[];
}

/** Builds the registry; refuses (and so stops start-up) on a duplicate name or an undeclared policy point. */
export function createToolRegistry(tools: readonly ToolDefinition[]): ToolRegistry {
  const byName = new Map<string, ToolDefinition>();
  for (const tool of tools) {
    if (!/^[a-z][a-z0-9_]{0,63}$/.test(tool.name)) throw new ToolRegistryError(`tool name ${tool.name} is not valid`);
    if (byName.has(tool.name)) throw new ToolRegistryError(`tool ${tool.name} is registered twice`);
    if (!isPolicyPoint(tool.policyPoint)) {
      throw new ToolRegistryError(`tool ${tool.name} declares policy point ${tool.policyPoint}, which the catalogue does not`);
    }
    byName.set(tool.name, tool);
  }
  return { get: (name) => byName.get(name), list: () => [...byName.values()] };
}

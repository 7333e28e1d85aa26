import { capabilityOf, type Capability, type ToolDescription } from "../domain/capability-search";

/** tool-exec's catalogue (ListTools over gRPC): reads only, never runs a tool. */
export type ListTools = () => Promise<readonly ToolDescription[]>;

/**
 * The capabilities of tool-exec's catalogue, read at most every `ttlMs` (default 30 s): the catalogue changes
 * only when tool-exec restarts with other tools. Concurrent readers share one request; a failed read is not kept.
 */
export function createCapabilityCatalogue(listTools: ListTools, options: { ttlMs?: number; now?: () => number } = {}) {
  const ttlMs = options.ttlMs ?? 30_000;
  const now = options.now ?? Date.now;
  let cached: { at: number; value: Promise<Capability[]> } | null = null;
  return function capabilities(): Promise<Capability[]> {
    if (cached && now() - cached.at < ttlMs) return cached.value;
    const value = listTools().then((tools) => tools.map(capabilityOf));
    const entry = { at: now(), value };
    cached = entry;
    value.catch(() => {
      if (cached === entry) cached = null;
    });
    return value;
  };
}

export type Capabilities = ReturnType<typeof createCapabilityCatalogue>;

/** The deepest nesting of arrays and objects a request body may have (a tool's arguments over MCP need a few). */
export const MAX_BODY_DEPTH = 32;

/**
 * True when a parsed JSON value nests arrays and objects more than `max` levels deep: code that walks a value
 * recursively (canonical JSON, fingerprints, schema checks) then never meets a depth a client chose. Walks
 * without recursion itself.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const pending: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (pending.length > 0) {
    const { value: current, depth } = pending.pop()!;
    if (current === null || typeof current !== "object") continue;
    if (depth + 1 > max) return true;
    for (const item of Array.isArray(current) ? current : Object.values(current)) pending.push({ value: item, depth: depth + 1 });
  }
  return false;
}

import type { ChatMessage } from "./model";

/** A rough token estimate (four characters a token), enough to stay clear of a window. */
export function estimateTokens(messages: readonly ChatMessage[]): number {
  let chars = 0;
  for (const m of messages) {
    chars += (m.content ?? "").length + 8;
    if (m.role === "assistant" && m.tool_calls) for (const c of m.tool_calls) chars += c.function.name.length + c.function.arguments.length;
  }
  return Math.ceil(chars / 4);
}

/** Keeps a result's key fields: scalars, and the size of arrays and objects, never their contents. */
export function compactValue(value: unknown): unknown {
  if (value === null || typeof value !== "object") return typeof value === "string" && value.length > 80 ? `${value.slice(0, 80)}…` : value;
  if (Array.isArray(value)) return { items: value.length };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = v !== null && typeof v === "object" ? (Array.isArray(v) ? { items: v.length } : { fields: Object.keys(v as object).length }) : compactValue(v);
  }
  return out;
}

/**
 * Which older tool results to compact so the conversation fits in `budgetTokens`: oldest first, never the
 * `keepLast` newest. Returns the call ids, or none when it already fits.
 */
export function callsToCompact(messages: readonly ChatMessage[], budgetTokens: number, keepLast = 2): string[] {
  let total = estimateTokens(messages);
  if (total <= budgetTokens) return [];
  const tools = messages.filter((m): m is Extract<ChatMessage, { role: "tool" }> => m.role === "tool");
  const chosen: string[] = [];
  for (const m of tools.slice(0, Math.max(0, tools.length - keepLast))) {
    if (total <= budgetTokens) break;
    const before = Math.ceil(m.content.length / 4);
    const after = Math.ceil(JSON.stringify(compactValue(JSON.parse(m.content))).length / 4);
    if (after >= before) continue;
    chosen.push(m.tool_call_id);
    total -= before - after;
  }
  return chosen;
}

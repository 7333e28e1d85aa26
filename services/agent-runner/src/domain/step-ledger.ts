import type { RunEvent } from "@steward/contract";

/** The ledger's budget (SPEC §4); it is tool output, so it goes into a user message, never the system prompt. */
export const LEDGER_MAX_CHARS = 1500;

function preview(value: unknown, max: number): string {
  const text = typeof value === "string" ? value : JSON.stringify(value ?? null);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * A compact summary of the run's recent tool steps, newest first, so that after many turns the model still
 * knows what it did: step, tool, outcome, a short preview. Whole lines only, at most `maxChars`.
 */
export function stepLedger(events: readonly RunEvent[], maxChars = LEDGER_MAX_CHARS): string {
  const lines: string[] = [];
  for (const e of events) {
    if (e.type !== "tool_result" || e.data.tool_name === "ask_user") continue;
    lines.push(`- step ${e.data.step_no} ${e.data.tool_name}: ${e.data.result_code} ${preview(e.data.result, 120)}`);
  }
  let out = "";
  for (const line of lines.reverse()) {
    if (out.length + line.length + 1 > maxChars) break;
    out = out ? `${out}\n${line}` : line;
  }
  return out;
}

import type { RunEvent, ToolResult } from "@steward/contract";

/** The ledger's budget (SPEC §4); it is tool output, so it goes into a user message, never the system prompt. */
export const LEDGER_MAX_CHARS = 1500;

function preview(value: unknown, max: number): string {
  const text = typeof value === "string" ? value : JSON.stringify(value ?? null);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** One tool step as a ledger line: step, tool, outcome and the first `previewChars` of the result. */
export function ledgerLine(result: ToolResult["data"], previewChars: number): string {
  return `- step ${result.step_no} ${result.tool_name}: ${result.result_code} ${preview(result.result, previewChars)}`;
}

/**
 * A compact summary of the run's recent tool steps, newest first, so that after many turns the model still
 * knows what it did: step, tool, outcome, a short preview. Whole lines only, at most `maxChars`.
 */
export function stepLedger(events: readonly RunEvent[], maxChars = LEDGER_MAX_CHARS): string {
  const lines: string[] = [];
  for (const e of events) {
    if (e.type !== "tool_result" || e.data.tool_name === "ask_user") continue;
    lines.push(ledgerLine(e.data, 120));
  }
  let out = "";
  for (const line of lines.reverse()) {
    if (out.length + line.length + 1 > maxChars) break;
    out = out ? `${out}\n${line}` : line;
  }
  return out;
}

/** One line of a run's step ledger: a tool step and how it ended. */
export interface LedgerLine {
  readonly step: number;
  readonly tool: string;
  readonly code: string;
  readonly preview: string;
}

const PREVIEW_CHARS = 120;

function preview(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value ?? null);
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS - 1)}…` : text;
}

/**
 * The run's step ledger as the runner keeps it for the model (services/agent-runner/src/domain/step-ledger.ts):
 * every tool step but the questions to the user, newest first, with its outcome and a short preview of the
 * result. Shown whole here; the model's copy is cut to its character budget.
 */
export function ledgerOf(events: readonly { readonly type: string; readonly data: Record<string, unknown> }[]): LedgerLine[] {
  const lines: LedgerLine[] = [];
  for (const e of events) {
    if (e.type !== "tool_result" || e.data.tool_name === "ask_user") continue;
    lines.push({
      step: Number(e.data.step_no),
      tool: String(e.data.tool_name ?? "?"),
      code: String(e.data.result_code ?? "?"),
      preview: preview(e.data.result),
    });
  }
  return lines.reverse();
}

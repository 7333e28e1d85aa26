import { Limits } from "./limits";
import type { ToolOutcomeRecord } from "./run/fold";

export interface Cycle {
  /** How many calls one repetition of the cycle spans (1–4). */
  readonly length: number;
  /** The tool of the call that completed the cycle. */
  readonly tool_name: string;
}

/**
 * Looks for a cycle at the end of the call history: the last `period × repeats` fingerprints are one block
 * of `period` calls repeated `repeats` times in a row. The shortest period wins.
 */
export function detectCycle(
  history: readonly ToolOutcomeRecord[],
  periods: { min: number; max: number } = { min: Limits.cycleMinPeriod, max: Limits.cycleMaxPeriod },
  repeats: number = Limits.cycleRepeats,
): Cycle | null {
  const prints = history.map((h) => h.fingerprint);
  for (let period = periods.min; period <= periods.max; period++) {
    const span = period * repeats;
    if (prints.length < span) break;
    const tail = prints.slice(prints.length - span);
    if (tail.some((p) => !p)) continue;
    if (tail.every((p, i) => p === tail[i % period])) {
      return { length: period, tool_name: history[history.length - 1].tool_name };
    }
  }
  return null;
}

/** How many of this tool's latest calls failed in a row (a success or a different outcome ends the run of failures). */
export function consecutiveFailures(history: readonly ToolOutcomeRecord[], toolName: string, failureCode: string): number {
  let n = 0;
  for (let i = history.length - 1; i >= 0; i--) {
    const h = history[i];
    if (h.tool_name !== toolName) continue;
    if (h.result_code !== failureCode) break;
    n++;
  }
  return n;
}

import type { Row } from "../report";

/** One bench run of a pair: which tree it measured and the rows it printed. */
export interface LabelledRun {
  readonly label: string;
  readonly rows: readonly Row[];
}

const keyOf = (r: Row) => `${r.section}\u0000${r.measure}`;

/**
 * The runs side by side, one Markdown row per measure and one column per run, in the order given (after and
 * before alternating, as they ran). Measures appear in the order the first run printed them; a measure some
 * run lacks (a phase that failed there) gets an empty cell, and one only a later run printed comes last.
 */
export function compareTable(runs: readonly LabelledRun[]): string {
  const order: Array<{ key: string; section: string; measure: string }> = [];
  const seen = new Set<string>();
  const byRun = runs.map((run) => new Map(run.rows.map((r) => [keyOf(r), r.value])));
  for (const run of runs) {
    for (const r of run.rows) {
      const key = keyOf(r);
      if (seen.has(key)) continue;
      seen.add(key);
      order.push({ key, section: r.section, measure: r.measure });
    }
  }
  const esc = (s: string) => s.replace(/\|/g, "\\|");
  const out = [`| | measure | ${runs.map((r) => esc(r.label)).join(" | ")} |`, `| --- | --- |${runs.map(() => " --- |").join("")}`];
  for (const m of order) {
    out.push(`| ${m.section} | ${esc(m.measure)} | ${byRun.map((values) => esc(values.get(m.key) ?? "")).join(" | ")} |`);
  }
  return out.join("\n");
}

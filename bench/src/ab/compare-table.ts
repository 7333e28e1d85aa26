import type { Row } from "../report";

/** One bench run of a pair: which tree it measured and the rows it printed. */
export interface LabelledRun {
  readonly label: string;
  readonly rows: readonly Row[];
}

/** A measure's name may end with a number measured in that run ("throughput, 8 concurrent runs (iteration p50 54.0 ms)"). */
const MEASURED_IN_NAME = /\s*\(([^()]*\d\s*ms)\)$/;

/** The measure's name without what its run measured, and that measurement, which goes into the run's cell. */
function split(r: Row): { measure: string; value: string } {
  const found = MEASURED_IN_NAME.exec(r.measure);
  if (!found) return { measure: r.measure, value: r.value };
  return { measure: r.measure.slice(0, found.index), value: `${r.value}; ${found[1]}` };
}

const keyOf = (section: string, measure: string) => `${section}\u0000${measure}`;

/**
 * The runs side by side, one Markdown row per measure and one column per run, in the order given (after and
 * before alternating, as they ran). Measures appear in the order the first run printed them; a measure some
 * run lacks (a phase that failed there) gets an empty cell, and one only a later run printed comes last. A number
 * a run measured in a measure's name is moved into that run's cell, so the runs' rows still meet.
 */
export function compareTable(runs: readonly LabelledRun[]): string {
  const order: Array<{ key: string; section: string; measure: string }> = [];
  const seen = new Set<string>();
  const byRun = runs.map((run) => {
    const values = new Map<string, string>();
    for (const r of run.rows) {
      const { measure, value } = split(r);
      const key = keyOf(r.section, measure);
      values.set(key, value);
      if (seen.has(key)) continue;
      seen.add(key);
      order.push({ key, section: r.section, measure });
    }
    return values;
  });
  const esc = (s: string) => s.replace(/\|/g, "\\|");
  const out = [`| | measure | ${runs.map((r) => esc(r.label)).join(" | ")} |`, `| --- | --- |${runs.map(() => " --- |").join("")}`];
  for (const m of order) {
    out.push(`| ${m.section} | ${esc(m.measure)} | ${byRun.map((values) => esc(values.get(m.key) ?? "")).join(" | ")} |`);
  }
  return out.join("\n");
}

import { services, type Sample, type Service } from "./sampler";

/** One service's memory over the soak, judged against the reference sample. */
export interface Verdict {
  readonly service: Service;
  /** RSS at the reference sample (after the first 1 000 runs), MB. */
  readonly atBaseline: number;
  /** Highest RSS sampled from the reference on, MB. */
  readonly peak: number;
  /** RSS when the last run ended, MB. */
  readonly final: number;
  readonly ratio: number;
  /** RSS after the idle pause, MB (NaN without one). */
  readonly idle: number;
  /** V8 heap used at the reference and at the end, MB (from the preload, ≤ 2 s old). */
  readonly heapAtBaseline: number;
  readonly heapFinal: number;
  /** Final RSS at most (1 + tolerance) × the reference: growth is what the soak looks for. */
  readonly pass: boolean;
}

export function verdicts(samples: readonly Sample[], tolerance: number): Verdict[] {
  const baseIndex = samples.findIndex((s) => s.label === "baseline");
  const base = samples[baseIndex];
  const end = samples.find((s) => s.label === "end of load");
  const idle = samples.find((s) => s.label?.startsWith("after "));
  return services.map((service) => {
    const atBaseline = base?.rss[service] ?? Number.NaN;
    const final = end?.rss[service] ?? Number.NaN;
    const peak = base
      ? Math.max(
          ...samples
            .slice(baseIndex)
            .map((s) => s.rss[service])
            .filter((v) => !Number.isNaN(v)),
        )
      : Number.NaN;
    const ratio = final / atBaseline;
    return {
      service,
      atBaseline,
      peak,
      final,
      ratio: Math.round(ratio * 100) / 100,
      idle: idle?.rss[service] ?? Number.NaN,
      heapAtBaseline: base?.heapUsed[service] ?? Number.NaN,
      heapFinal: end?.heapUsed[service] ?? Number.NaN,
      pass: Number.isFinite(ratio) && ratio <= 1 + tolerance,
    };
  });
}

const names: Record<Service, string> = { runner: "agent-runner", toolExec: "tool-exec", policy: "policy", gateway: "gateway" };

export function soakTable(rows: readonly Verdict[], baselineRuns: number, tolerance: number): string {
  const f = (v: number) => (Number.isNaN(v) ? "–" : v.toFixed(0));
  const head = [
    "service",
    `RSS at ${baselineRuns} runs`,
    "peak",
    "final",
    "final/at-base",
    "after idle",
    "heap used base → final",
    `within ${tolerance * 100} %`,
  ];
  const body = rows.map((r) => [
    names[r.service],
    `${f(r.atBaseline)} MB`,
    `${f(r.peak)} MB`,
    `${f(r.final)} MB`,
    r.ratio.toFixed(2),
    Number.isNaN(r.idle) ? "–" : `${f(r.idle)} MB`,
    `${f(r.heapAtBaseline)} → ${f(r.heapFinal)} MB`,
    r.pass ? "pass" : "FAIL",
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join(" | ");
  return [line(head), widths.map((w) => "-".repeat(w)).join("-+-"), ...body.map(line)].join("\n");
}

import { describeRequest } from "./generate";
import type { FuzzResult } from "./run-fuzz";

/** How many failures are printed in full; the rest are counted. */
const SHOWN = 25;

/** The fuzz run as a reader needs it: the seed to replay it, what was answered, and every failure in full. */
export function formatFuzzReport(r: FuzzResult): string {
  const lines: string[] = [];
  const took = `${r.sent} requests in ${(r.elapsedMs / 1000).toFixed(1)} s`;
  lines.push(`gateway fuzz: seed ${r.seed} (replay: FUZZ_SEED=${r.seed}), ${took}, ${r.streamsCut} event streams cut after a short read`);
  const statuses = [...r.statuses.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([s, n]) => `${s}×${n}`);
  lines.push(`answers: ${statuses.join(" ")}`);
  lines.push("route                                          sent    2xx    401    429  other4xx  raw");
  for (const [name, t] of [...r.routes.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const n = (v: number, w = 7) => String(v).padStart(w);
    lines.push(`${name.padEnd(45)}${n(t.sent)}${n(t.ok)}${n(t.unauthenticated)}${n(t.rateLimited)}${n(t.otherClientError, 10)}${n(t.raw, 5)}`);
  }
  const kinds = new Map<string, number>();
  for (const f of r.failures) kinds.set(f.finding.kind, (kinds.get(f.finding.kind) ?? 0) + 1);
  lines.push(`failures: ${r.failures.length === 0 ? "none" : [...kinds.entries()].map(([k, n]) => `${k}×${n}`).join(", ")}`);
  for (const f of r.failures.slice(0, SHOWN)) {
    lines.push(`- ${f.finding.kind}: ${f.finding.why.replace(/\s+/g, " ").slice(0, 400)}`);
    lines.push(`    ${describeRequest(f.request)}`);
  }
  if (r.failures.length > SHOWN) lines.push(`… and ${r.failures.length - SHOWN} more`);
  if (r.failures.length > 0) {
    const only = [...new Set(r.failures.map((f) => f.request.index))].slice(0, 50).join(",");
    lines.push(`replay only the failing requests: FUZZ_SEED=${r.seed} FUZZ_ONLY=${only}`);
  }
  return lines.join("\n");
}

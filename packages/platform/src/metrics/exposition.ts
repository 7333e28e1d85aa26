/** One series of Prometheus exposition text. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const line = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const pair = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** The samples of exposition text (comments skipped); for tests and tools that read `/metrics`. */
export function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const raw of text.split("\n")) {
    if (raw.startsWith("#")) continue;
    const m = line.exec(raw);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const p of (m[2] ?? "").matchAll(pair)) labels[p[1]] = p[2];
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

/**
 * The sum of the series named `name` whose labels include `labels` (every series of the name when none are
 * given); undefined when no series matches.
 */
export function sampleValue(text: string | readonly Sample[], name: string, labels: Readonly<Record<string, string>> = {}): number | undefined {
  const samples = typeof text === "string" ? parseExposition(text) : text;
  const matching = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return matching.length === 0 ? undefined : matching.reduce((sum, s) => sum + s.value, 0);
}

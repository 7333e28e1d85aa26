import { otherLabelValue, type MetricDef } from "./catalog";

/** Label names that would carry an identity, a secret or free text: never allowed, whatever the metric. */
const forbiddenLabelName = /tenant|user|run_?id|session|prompt|token|secret|password|key|input|message|trace/i;
/** Values shaped like an identifier (a UUID, a long hex or base64 run): a bug somewhere, never kept. */
const idShaped = /[0-9a-f]{8}-[0-9a-f]{4}-|[0-9a-f]{16,}|[A-Za-z0-9_-]{33,}/i;
/** Distinct values a capped label keeps per metric; later newcomers count as "other". */
export const maxDistinctValues = 64;
const maxValueLength = 64;

export class MetricDefinitionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MetricDefinitionError";
  }
}

/** Throws when a definition names a label that could carry a tenant, a user, a run, a prompt or a token. */
export function checkLabelNames(def: MetricDef): void {
  for (const label of Object.keys(def.labels)) {
    if (forbiddenLabelName.test(label)) throw new MetricDefinitionError(`metric ${def.name}: label "${label}" is not allowed (identity or secret)`);
  }
}

export type LabelSet = Readonly<Record<string, string | number | undefined>>;

/**
 * Maps label values to bounded ones for one metric: a closed label keeps only its listed values, a capped
 * one its first `maxDistinctValues`; an id-shaped or overlong value, or a missing one, becomes "other". A
 * label the metric does not declare is a programming error.
 */
export function createLabelBounds(def: MetricDef): (values: LabelSet) => Record<string, string> {
  checkLabelNames(def);
  const names = Object.keys(def.labels);
  const closed = new Map(names.flatMap((n) => (def.labels[n] === "capped" ? [] : [[n, new Set(def.labels[n])] as const])));
  const seen = new Map(names.filter((n) => def.labels[n] === "capped").map((n) => [n, new Set<string>()]));
  return (values) => {
    const out: Record<string, string> = {};
    for (const key of Object.keys(values)) {
      if (!(key in def.labels)) throw new MetricDefinitionError(`metric ${def.name} has no label "${key}"`);
    }
    for (const name of names) {
      const raw = values[name];
      const value = raw === undefined ? otherLabelValue : String(raw);
      const allowed = closed.get(name);
      if (allowed) {
        out[name] = allowed.has(value) ? value : otherLabelValue;
        continue;
      }
      const known = seen.get(name)!;
      if (known.has(value)) out[name] = value;
      else if (value.length > maxValueLength || idShaped.test(value) || known.size >= maxDistinctValues) out[name] = otherLabelValue;
      else {
        known.add(value);
        out[name] = value;
      }
    }
    return out;
  };
}

import { createHash } from "node:crypto";
import { canonicalJson } from "@steward/contract";

/** A tool as tool-exec's catalogue (ListTools) describes it: the fields a capability is made of. */
export interface ToolDescription {
  readonly name: string;
  readonly description: string;
  /** The tool's input JSON schema, as JSON text. */
  readonly inputSchemaJson: string;
  readonly safety: string;
  readonly policyPoint: string;
  readonly requireConfirmation: boolean;
}

/** One capability as search_capabilities answers it (docs/mcp.md). */
export interface Capability {
  /** Stable: `tool:<registry name>`, the same for as long as the tool keeps its name. */
  readonly id: string;
  readonly description: string;
  /** `sha256:<hex>` of the canonical JSON of the input schema: a client notices a changed schema by it. */
  readonly schema_digest: string;
  readonly policy_point: string;
  /** `read` (reads only) or `write` (changes something: asked for confirmation where the tool requires it). */
  readonly route: "read" | "write";
  readonly requires_confirmation: boolean;
  /** The first segment of the policy point: `knowledge`, `dataset`, `mcp` (a mounted server's tool), … */
  readonly domain: string;
}

/** The digest of an input schema: canonical JSON, so key order and white space do not change it. */
export function schemaDigest(schemaJson: string): string {
  let canonical: string;
  try {
    canonical = canonicalJson(JSON.parse(schemaJson));
  } catch {
    canonical = schemaJson;
  }
  return `sha256:${createHash("sha256").update(canonical).digest("hex")}`;
}

export const domainOf = (policyPoint: string): string => policyPoint.split(".")[0] ?? "";

export function capabilityOf(tool: ToolDescription): Capability {
  return {
    id: `tool:${tool.name}`,
    description: tool.description,
    schema_digest: schemaDigest(tool.inputSchemaJson),
    policy_point: tool.policyPoint,
    route: tool.safety === "read" ? "read" : "write",
    requires_confirmation: tool.requireConfirmation,
    domain: domainOf(tool.policyPoint),
  };
}

const STOP_WORDS = new Set([
  "a",
  "an",
  "the",
  "of",
  "to",
  "for",
  "in",
  "on",
  "and",
  "or",
  "with",
  "my",
  "me",
  "from",
  "by",
  "into",
  "about",
  "some",
  "all",
  "our",
  "it",
  "its",
  "is",
]);

/** Verbs and nouns that mean the same thing here, mapped to one word. */
const SYNONYMS: Readonly<Record<string, string>> = {
  find: "search",
  look: "search",
  lookup: "search",
  query: "search",
  get: "read",
  fetch: "read",
  show: "read",
  view: "read",
  store: "save",
  write: "save",
  record: "save",
  create: "save",
  add: "save",
  doc: "document",
  docs: "document",
  article: "document",
  kb: "knowledge",
  table: "table",
  database: "dataset",
  db: "dataset",
  data: "dataset",
  sql: "query",
};

/** Lower-case words, stop words dropped, plural and -ing/-ed endings cut, synonyms folded: what matching compares. */
export function termsOf(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.toLowerCase().split(/[^a-z0-9]+/)) {
    if (!raw || STOP_WORDS.has(raw)) continue;
    let word = raw;
    if (word.length > 5 && word.endsWith("ing")) word = word.slice(0, -3);
    else if (word.length > 4 && word.endsWith("ed")) word = word.slice(0, -2);
    else if (/(ches|shes|xes|sses)$/.test(word)) word = word.slice(0, -2);
    else if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss")) word = word.slice(0, -1);
    out.push(SYNONYMS[word] ?? SYNONYMS[raw] ?? word);
  }
  return out;
}

export interface CapabilityQuery {
  /** An English action and object, e.g. "search the knowledge base". */
  readonly query: string;
  /** Only capabilities of this domain (the policy point's first segment). */
  readonly domain?: string;
}

/**
 * The capabilities that match a query, best first, at most `limit`: each query word found in the tool's name
 * counts 3, in its policy point 2, in its description 1; ties by id. A capability matching no word is left out.
 */
export function searchCapabilities(all: readonly Capability[], q: CapabilityQuery, limit = 10): Capability[] {
  const wanted = [...new Set(termsOf(q.query))];
  const scored: Array<{ capability: Capability; score: number }> = [];
  for (const capability of all) {
    if (q.domain !== undefined && capability.domain !== q.domain) continue;
    const name = new Set(termsOf(capability.id.replace(/^tool:/, "")));
    const point = new Set(termsOf(capability.policy_point));
    const description = new Set(termsOf(capability.description));
    let score = 0;
    for (const w of wanted) score += (name.has(w) ? 3 : 0) + (point.has(w) ? 2 : 0) + (description.has(w) ? 1 : 0);
    if (score > 0) scored.push({ capability, score });
  }
  scored.sort((a, b) => b.score - a.score || (a.capability.id < b.capability.id ? -1 : a.capability.id > b.capability.id ? 1 : 0));
  return scored.slice(0, limit).map((s) => s.capability);
}

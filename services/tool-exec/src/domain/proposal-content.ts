/**
 * The content checks of a knowledge proposal (SPEC §9: proposals never carry SQL, cache names or secrets).
 * Pure. A finding names its category and the field it was found in, never the text that matched: a secret
 * is not echoed into the tool's result, the run's events or a log line.
 */
export type ProposalFinding = { readonly reason: "secret" | "sql" | "table_name" | "cache_name"; readonly field: string };

type Rule = { readonly reason: ProposalFinding["reason"]; readonly test: (text: string) => boolean };

const matches =
  (...patterns: RegExp[]) =>
  (text: string) =>
    patterns.some((p) => p.test(text));

/**
 * Steward's own tables whose names are not English words ("runs", "events", "threads", "outbox" and
 * "memberships" are, and are caught only as `schema.table` next to SQL keywords or in SQL).
 */
const PLATFORM_TABLES = [
  "elevation_sessions",
  "kb_chunks",
  "kb_documents",
  "knowledge_proposals",
  "membership_changes",
  "policy_decisions",
  "policy_sets",
  "rate_limit_buckets",
  "role_actions",
  "run_datasets",
  "schema_migrations",
  "tenant_dataset_changes",
  "tenant_datasets",
  "tool_results",
];

const SECRET = matches(
  // A JSON Web Token: three base64url parts, the first a JSON object ("eyJ").
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/,
  // API keys of the common providers: OpenAI-style sk-…, AWS access key ids, GitHub and Slack tokens.
  /\bsk-[A-Za-z0-9_-]{16,}/,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/,
  /\bgh[pousr]_[A-Za-z0-9]{30,}/,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/,
  // A bearer token, as in an Authorization header.
  /\bbearer\s+[A-Za-z0-9._~+/=-]{16,}/i,
  // A private key block (PEM, OpenSSH).
  /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/,
  // A URL carrying credentials (scheme://user:password@host).
  /\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]+:[^\s/@]+@/i,
);

/** `password=…`, `api_key: …`: a credential's name with a value that is not a plain word. */
const CREDENTIAL_PAIR =
  /\b(?:password|passwd|pwd|passphrase|secret|client[_-]?secret|api[_-]?key|access[_-]?key|access[_-]?token|auth[_-]?token|token)\b\s*(=|:)\s*["']?([^\s"',;]{4,})/gi;

function credentialPair(text: string): boolean {
  for (const m of text.matchAll(CREDENTIAL_PAIR)) {
    // "Password: must be 12 characters" is a rule, not a password: after a colon, a lower-case word is prose.
    if (m[1] === "=" || !/^[a-z]+$/.test(m[2])) return true;
  }
  return false;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Shannon entropy of a string, in bits per character. */
export function entropyBits(text: string): number {
  const counts = new Map<string, number>();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) bits -= (n / text.length) * Math.log2(n / text.length);
  return bits;
}

/**
 * A long run of token characters mixing letters and digits with the entropy of a random key (≥ 3.5 bits a
 * character over ≥ 24 characters; a UUID, which names a document or a run, is not one).
 */
function highEntropyString(text: string): boolean {
  for (const [token] of text.matchAll(/[A-Za-z0-9+/=_-]{24,}/g)) {
    if (UUID.test(token) || !/[0-9]/.test(token) || !/[A-Za-z]/.test(token)) continue;
    if (entropyBits(token) >= 3.5) return true;
  }
  return false;
}

const IDENT = `[A-Za-z_"][\\w."]*`;
/**
 * SQL statements, not English: "select the region from the list" is prose. A SELECT counts when its keywords
 * are upper case, when it selects `*` or a comma list, or when its FROM is followed by a clause of a query.
 */
const SQL = matches(
  /\bSELECT\b[^;]{0,300}?\bFROM\b/,
  new RegExp(`\\bselect\\s+(?:distinct\\s+)?(?:\\*|${IDENT}\\s*,)[^;]{0,300}?\\bfrom\\s+${IDENT}`, "i"),
  new RegExp(`\\bselect\\b[^;]{0,300}?\\bfrom\\s+${IDENT}\\s+(?:where|join|inner\\s+join|left\\s+join|group\\s+by|order\\s+by|limit)\\b`, "i"),
  new RegExp(`\\binsert\\s+into\\s+${IDENT}`, "i"),
  new RegExp(`\\bdelete\\s+from\\s+${IDENT}`, "i"),
  new RegExp(`\\bupdate\\s+${IDENT}\\s+set\\s+${IDENT}\\s*=`, "i"),
  /\b(?:drop|truncate|alter)\s+table\b/i,
  /\bcreate\s+(?:or\s+replace\s+)?(?:table|view|index|function|role|user|schema|database|trigger)\b/i,
  /\bgrant\s+(?:select|insert|update|delete|all)\b[^;]{0,200}?\bon\b/i,
  /\bunion\s+(?:all\s+)?select\b/i,
);

/**
 * Table names: Steward's own tables, a name qualified by a system schema (`public.x`, `pg_catalog.x`), or a
 * `schema.table` name right after a keyword that names a table (FROM, JOIN, INTO, TABLE, UPDATE).
 */
const TABLE_NAME = matches(
  new RegExp(`\\b(?:${PLATFORM_TABLES.join("|")})\\b`, "i"),
  /\b(?:public|pg_catalog|information_schema|pg_temp)\.[A-Za-z_]\w*/i,
  /\b(?:from|join|into|table|update)\s+"?[A-Za-z_]\w*"?\."?[A-Za-z_]\w*/i,
);

/**
 * Cache names: a key or name that joins `cache` to another identifier part (`session_cache`, `cache:users:42`,
 * `app.cache.tokens`), or a cache server's address (redis://, memcached://).
 */
const CACHE_NAME = matches(/\b[A-Za-z0-9]+[_:.]cache\b|\bcache[_:.][A-Za-z0-9]+/i, /\b(?:redis|rediss|memcached?):\/\//i);

const RULES: readonly Rule[] = [
  { reason: "secret", test: (t) => SECRET(t) || credentialPair(t) || highEntropyString(t) },
  { reason: "sql", test: SQL },
  { reason: "table_name", test: TABLE_NAME },
  { reason: "cache_name", test: CACHE_NAME },
];

/** The first finding over the proposal's fields (secrets first), or null when it may be queued. */
export function checkProposalContent(fields: Readonly<Record<string, string | undefined>>): ProposalFinding | null {
  for (const rule of RULES) {
    for (const [field, text] of Object.entries(fields)) if (text && rule.test(text)) return { reason: rule.reason, field };
  }
  return null;
}

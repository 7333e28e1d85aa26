import type { DecisionRecord, DocumentSummary, McpSessionRecord, Page } from "@steward/contract";
import { api } from "./api";

/** A stored policy set (docs/openapi.json, /v1/admin/policies). */
export interface PolicySet {
  readonly version: number;
  /** draft, active or retired */
  readonly status: string;
  readonly policy_ids: readonly string[];
  readonly policies: string;
  readonly created_by: string;
  readonly created_at: string;
  readonly activated_at: string | null;
}

export interface Validation {
  readonly valid: boolean;
  readonly policy_ids: readonly string[];
  readonly issues: ReadonlyArray<{ readonly policy_id: string; readonly message: string }>;
}

export interface DryRunRequest {
  readonly version?: number;
  readonly user_id: string;
  readonly roles: string[];
  readonly action: string;
  readonly resource: { readonly type: string; readonly id: string };
  readonly elevated?: boolean;
}

export interface DryRunAnswer {
  readonly permit: boolean;
  /** What a live call would carry: null on permit, "60500" denied, "60503" a policy errored. */
  readonly code: string | null;
  readonly policy_ids: readonly string[];
  readonly version: number;
  readonly errors: readonly string[];
}

/** One record of the decision log (GET /v1/audit/decisions). */
export type Decision = DecisionRecord;

export type KnowledgeDocument = DocumentSummary;

/** GET /v1/admin/status: the fields the schema fixes; the inner objects are shown as they come. */
/** The whole platform: what the operators' tenant sees. */
export interface PlatformStatus {
  readonly scope: "platform";
  readonly status: "ok" | "degraded";
  readonly checked_at: string;
  readonly problems: readonly string[];
  readonly dependencies: Readonly<Record<string, unknown>>;
  readonly services: ReadonlyArray<Readonly<Record<string, unknown>>>;
  readonly runners: { readonly attached: number; readonly in_flight: number; readonly consumer: Readonly<Record<string, unknown>> | null };
  readonly queue: Readonly<Record<string, unknown>> | null;
  readonly outbox: Readonly<Record<string, unknown>> | null;
  readonly dead_letters: Readonly<Record<string, unknown>> | null;
}

/** The caller's own tenant: what any other tenant's administrator sees. */
export interface TenantStatus {
  readonly scope: "tenant";
  readonly tenant_id: string;
  readonly status: "ok" | "degraded";
  readonly checked_at: string;
  readonly problems: readonly string[];
  readonly queue: Readonly<Record<string, unknown>> | null;
}

const v = (version: number) => encodeURIComponent(String(version));

export const policies = {
  // The newest ten, newest first (the API pages the rest with `before`).
  list: () => api<{ items: PolicySet[]; next_before: number | null }>("GET", "/v1/admin/policies"),
  get: (version: number) => api<PolicySet>("GET", `/v1/admin/policies/${v(version)}`),
  upload: (text: string) => api<PolicySet>("POST", "/v1/admin/policies", { policies: text }),
  validate: (text: string) => api<Validation>("POST", "/v1/admin/policies/validate", { policies: text }),
  dryRun: (request: DryRunRequest) => api<DryRunAnswer>("POST", "/v1/admin/policies/dry-run", request),
  activate: (version: number) => api<PolicySet>("POST", `/v1/admin/policies/${v(version)}/activate`),
};

/** The decision log, oldest first: `after` is the id of the last record already seen (0: from the start). */
export const decisions = (query: { after: number; limit: number; runId?: string; mcpSessionId?: string }) => {
  const params = new URLSearchParams({ after: String(query.after), limit: String(query.limit) });
  if (query.runId) params.set("run_id", query.runId);
  if (query.mcpSessionId) params.set("mcp_session_id", query.mcpSessionId);
  return api<{ items: Decision[]; next_after: number }>("GET", `/v1/audit/decisions?${params}`);
};

export const knowledge = {
  list: (page: number, pageSize: number) => api<Page<KnowledgeDocument>>("GET", `/v1/knowledge/documents?page=${page}&page_size=${pageSize}`),
  add: (body: { title: string; body: string; format: "text" | "markdown" }) => api<{ id: string; title: string }>("POST", "/v1/knowledge/documents", body),
  remove: (id: string) => api<null>("DELETE", `/v1/knowledge/documents/${encodeURIComponent(id)}`),
};

export const platformStatus = () => api<PlatformStatus | TenantStatus>("GET", "/v1/admin/status");

/** A recorded MCP session (GET /v1/audit/mcp-sessions). */
export type McpSession = McpSessionRecord;

/** The MCP session list's filters: the query keys of GET /v1/audit/mcp-sessions. */
export interface McpSessionFilter {
  readonly user_id?: string;
  readonly mode?: string;
  readonly open?: "true" | "false";
}

/** The tenant's MCP sessions, newest first. */
export const mcpSessions = (filter: McpSessionFilter, page: number, pageSize: number) => {
  const params = new URLSearchParams({ page: String(page), page_size: String(pageSize) });
  for (const [key, value] of Object.entries(filter)) if (value) params.set(key, value);
  return api<{ items: McpSession[]; page: number; page_size: number; total: number }>("GET", `/v1/audit/mcp-sessions?${params}`);
};

import type { AdminRunView, EventPage, KnowledgeProposal, Page, StoredEventView, ThreadView } from "@steward/contract";
import { api, type RunSnapshot } from "./api";

/** A thread (docs/threads.md); `runs` only from GET /v1/threads/:id. */
export type Thread = ThreadView;

/** A knowledge proposal (docs/memory.md). */
export type Proposal = KnowledgeProposal;

/** A run as the admins' view answers it (docs/admin-runs.md). */
export type AdminRun = AdminRunView;

export type { Page };

export type StoredEvent = StoredEventView;

const id = encodeURIComponent;
const query = (values: Record<string, string | number | undefined>): string => {
  const pairs = Object.entries(values).filter((e): e is [string, string | number] => e[1] !== undefined && e[1] !== "");
  return pairs.length ? `?${new URLSearchParams(pairs.map(([k, v]) => [k, String(v)])).toString()}` : "";
};

export const threads = {
  list: (page = 1) => api<Page<Thread>>("GET", `/v1/threads${query({ page, page_size: 100 })}`),
  get: (threadId: string) => api<Thread>("GET", `/v1/threads/${id(threadId)}`),
  create: (title?: string) => api<Thread>("POST", "/v1/threads", title ? { title } : {}),
  fork: (threadId: string, atRunId: string) => api<Thread>("POST", `/v1/threads/${id(threadId)}/fork`, { at_run_id: atRunId }),
  archive: (threadId: string) => api<Thread>("DELETE", `/v1/threads/${id(threadId)}`),
  ask: (threadId: string, input: string) => api<RunSnapshot>("POST", "/v1/agents/runs", { input, thread_id: threadId }),
};

export const proposals = {
  list: (filter: { status?: string; tenant?: boolean }) =>
    api<Page<Proposal>>("GET", `/v1/knowledge/proposals${query({ status: filter.status, scope: filter.tenant ? "tenant" : undefined, page_size: 100 })}`),
  apply: (proposalId: string) => api<Proposal>("POST", `/v1/knowledge/proposals/${id(proposalId)}/apply`),
  dismiss: (proposalId: string) => api<Proposal>("POST", `/v1/knowledge/proposals/${id(proposalId)}/dismiss`),
};

/** The admins' run list filters: the query keys of GET /v1/admin/runs. */
export interface AdminRunFilter {
  readonly user?: string;
  readonly state?: string;
  readonly code?: string;
  readonly thread_id?: string;
}

export const adminRuns = {
  list: (filter: AdminRunFilter, page = 1) => api<Page<AdminRun>>("GET", `/v1/admin/runs${query({ ...filter, page, page_size: 50 })}`),
  get: (runId: string) => api<AdminRun>("GET", `/v1/admin/runs/${id(runId)}`),
  events: (runId: string, after = 0) => api<EventPage>("GET", `/v1/admin/runs/${id(runId)}/events${query({ after, limit: 1000 })}`),
};

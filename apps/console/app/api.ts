import type { Evidence, Page, RunSnapshot } from "@steward/contract";
import { currentToken } from "./session";

/** A problem document (RFC 9457 with Steward's code) the API answered with. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: number | undefined,
    detail: string,
  ) {
    super(detail);
    this.name = "ApiError";
  }
}

// The run's wire shape is the contract's (packages/contract/src/snapshot.ts, wire.ts), as the CLI reads it.
export type { Evidence, RunSnapshot };
export type RunPage = Page<RunSnapshot>;

/** Called when the API refuses the token (401): the page goes back to sign-in. */
let onUnauthenticated: () => void = () => undefined;
export const whenUnauthenticated = (handler: () => void) => (onUnauthenticated = handler);

/** One call of the public REST API on this origin, with the token in the Authorization header. */
export async function api<T>(method: string, path: string, body?: unknown, token: string | null = currentToken()): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: "no-store" });
  } catch {
    throw new ApiError(0, undefined, "the gateway cannot be reached");
  }
  const text = await res.text();
  const parsed = text ? safeJson(text) : null;
  if (!res.ok) {
    const problem = (parsed ?? {}) as { detail?: unknown; code?: unknown };
    if (res.status === 401 && token) onUnauthenticated();
    throw new ApiError(
      res.status,
      typeof problem.code === "number" ? problem.code : undefined,
      typeof problem.detail === "string" ? problem.detail : `HTTP ${res.status}`,
    );
  }
  return parsed as T;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export const runs = {
  list: () => api<RunPage>("GET", "/v1/agents/runs?page=1&page_size=100"),
  get: (id: string) => api<RunSnapshot>("GET", `/v1/agents/runs/${encodeURIComponent(id)}`),
  create: (body: { input: string; mode: string; response_language?: string }) => api<RunSnapshot>("POST", "/v1/agents/runs", body),
  answer: (id: string, answer: string) => api<RunSnapshot>("POST", `/v1/agents/runs/${encodeURIComponent(id)}/input`, { answer }),
  decide: (id: string, decision: "approve" | "reject", fingerprint?: string) =>
    api<RunSnapshot>("POST", `/v1/agents/runs/${encodeURIComponent(id)}/confirmation`, fingerprint ? { decision, fingerprint } : { decision }),
  cancel: (id: string) => api<RunSnapshot>("POST", `/v1/agents/runs/${encodeURIComponent(id)}/cancel`),
};

/** The development sign-in (404 outside development): a token for the demo user. */
export const devSignIn = () => api<{ token: string; user_id: string; tenant_id: string }>("POST", "/v1/dev/sign-in", undefined, null);

export const TERMINAL_STATES: ReadonlySet<string> = new Set(["succeeded", "failed", "cancelled"]);
